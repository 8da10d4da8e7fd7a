import type { ParseAsResponse } from 'openapi-fetch';
import type { components } from '../../generated/api.js';
import { numericHeaders, responseHeaders } from '../../generated/response-headers.js';
import type { ProblemKind } from '../../server/kit.js';

// What a call of the typed client gives back: one member per status the contract declares for the operation,
// so that `if (result.status === 404)` narrows `error` to the problem, `result.headers` has that answer's
// headers as the contract names and types them, a 304 is "not modified" and no error, and a refusal that
// says when to come back has `retryAfter` in seconds. Browser-safe.

/** The `type` of the service's problems: its own kinds, and those the Prism mock sends for requests it cannot match. */
export type ProblemType = `urn:user-records:problem:${ProblemKind}` | `https://stoplight.io/prism/errors#${string}`;

/** An error response of the service (RFC 9457 problem details), with `type` one of the kinds the service has. */
export type Problem = Omit<components['schemas']['Problem'], 'type'> & { type: ProblemType };

type ResponsesOf<Operation> = Operation extends { responses: infer Responses } ? Responses : never;
/** The body of a declared response, whichever media type; `undefined` for one without content (204, 304). */
type BodyOf<Response> = Response extends { content: infer Content } ? Content[keyof Content] : undefined;
/** The declared headers, without openapi-typescript's `[name: string]: unknown`. */
type Declared<Headers> = { [Name in keyof Headers as string extends Name ? never : Name]: Headers[Name] };
type HeadersOf<Response> = Response extends { headers: infer Headers } ? Declared<Headers> : Record<never, never>;
type Strict<Body> = Body extends components['schemas']['Problem'] ? Problem : Body;
type RetryOf<Response> = 'Retry-After' extends keyof HeadersOf<Response> ? { readonly retryAfter: number } : unknown;

/** The answer with status `S`, `R` as the contract declares it. */
type OutcomeOf<R, S extends number, Init> = S extends 304
  ? { status: 304; notModified: true; data?: undefined; error?: undefined; headers: HeadersOf<R>; response: Response }
  : `${S}` extends `2${string}`
    ? { status: S; data: ParseAsResponse<BodyOf<R>, Init>; error?: undefined; notModified?: undefined; headers: HeadersOf<R>; response: Response }
    : { status: S; data?: undefined; error: Strict<BodyOf<R>>; notModified?: undefined; headers: HeadersOf<R>; response: Response } & RetryOf<R>;

/** Every answer an operation has in the contract, told apart by `status`. */
export type Outcome<Operation, Init> = {
  [S in keyof ResponsesOf<Operation> & number]: OutcomeOf<ResponsesOf<Operation>[S], S, Init>;
}[keyof ResponsesOf<Operation> & number];

/** `Retry-After` (RFC 9110 §10.2.3) as seconds from now: delay-seconds, or an HTTP date. */
export function retryAfterSeconds(value: string | null): number | undefined {
  if (value === null) return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** openapi-fetch's `{ data, error, response }` as an Outcome of the operation. */
export function toOutcome(operationId: string, result: { data?: unknown; error?: unknown; response: Response }): unknown {
  const { response } = result;
  const headers: Record<string, string | number> = {};
  for (const name of responseHeaders[operationId]?.[String(response.status)] ?? []) {
    const value = response.headers.get(name);
    if (value !== null) headers[name] = numericHeaders.has(name) ? Number(value) : value;
  }
  const retryAfter = retryAfterSeconds(response.headers.get('Retry-After'));
  const outcome =
    response.status === 304
      ? // openapi-fetch reads a 304 as an error with an empty body; it is the answer a conditional GET hopes for.
        { status: 304, notModified: true, data: undefined, error: undefined, headers, response }
      : { data: result.data, error: result.error, status: response.status, headers, response };
  return retryAfter === undefined ? outcome : { ...outcome, retryAfter };
}
