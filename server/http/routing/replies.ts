// What every handler returns, seen from the HTTP layer, and how its body is sent. Browser-safe: the Koa router
// and the MSW handlers (fetch-dispatch.ts) both send replies by these rules.

/** What every handler returns. */
export interface AnyReply {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}
export type AnyHandler = (request: unknown) => Promise<AnyReply>;

/** True for values to be sent as a JSON array of their items (a list, read as it is sent). */
export function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/**
 * The Content-Type of an answer in a media type of the contract. The contract declares text as it is sent,
 * with its charset (text/plain would be US-ASCII without one), and that is sent as it is; JSON and
 * problem+json have no charset parameter (RFC 8259 §11: JSON is UTF-8), so none is sent, and tools that
 * compare it with the contract's `application/json` (Dredd) find it equal.
 */
export const contentTypeOf = (mediaType: string): string =>
  mediaType.startsWith('text/') && !mediaType.includes(';') ? `${mediaType}; charset=utf-8` : mediaType;

/** The Content-Type of a body: text is the protected resource's plain text; everything else is JSON. */
export const mediaTypeOf = (body: unknown): string => contentTypeOf(typeof body === 'string' ? 'text/plain' : 'application/json');
