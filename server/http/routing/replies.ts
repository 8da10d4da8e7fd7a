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

/** The media type of a body: text is the protected resource's plain text; everything else is JSON. */
export const mediaTypeOf = (body: unknown): string => (typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8');
