import type { Context, Middleware } from 'koa';
import { DomainError, InvalidParameterError, RequestAbandonedError, SearchesBusyError, StoreUnavailableError, type DomainErrorKind } from '../../domain/errors.js';
import type { Logger } from '../../logger.js';
import type { FieldError } from '../contract/contract.js';

// The one module that writes application/problem+json (RFC 9457, https://www.rfc-editor.org/rfc/rfc9457).

/** Kinds of problem that only the HTTP layer raises. */
type HttpProblemKind =
  | 'request-timeout'
  | 'too-many-attempts'
  | 'too-many-writes'
  | 'credential-checks-busy'
  | 'headers-too-large'
  | 'expectation-failed'
  | 'bad-request'
  | 'malformed-json'
  | 'unauthorized'
  | 'method-not-allowed'
  | 'payload-too-large'
  | 'unsupported-media-type'
  | 'validation-failed'
  | 'internal-error'
  | 'too-many-connections'
  | 'metrics-unavailable';

/** The name of a kind of problem. */
export type ProblemKind = DomainErrorKind | HttpProblemKind;

/** Kinds of problem the service reports, each with its status, title and any headers it always carries. */
const PROBLEMS: Record<ProblemKind, { status: number; title: string; headers?: Record<string, string> }> = {
  'bad-request': { status: 400, title: 'Bad Request' },
  'invalid-parameter': { status: 400, title: 'Invalid parameter' },
  'malformed-json': { status: 400, title: 'Malformed JSON' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  'not-found': { status: 404, title: 'Not Found' },
  'method-not-allowed': { status: 405, title: 'Method Not Allowed' },
  'request-timeout': { status: 408, title: 'Request Timeout' },
  'idempotency-key-in-flight': { status: 409, title: 'Conflict', headers: { 'Retry-After': '1' } },
  'precondition-failed': { status: 412, title: 'Precondition Failed' },
  'payload-too-large': { status: 413, title: 'Payload Too Large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported Media Type' },
  'validation-failed': { status: 422, title: 'Validation failed' },
  'idempotency-key-reused': { status: 422, title: 'Idempotency-Key reused' },
  'expectation-failed': { status: 417, title: 'Expectation Failed' },
  'too-many-attempts': { status: 429, title: 'Too Many Requests' },
  'too-many-writes': { status: 429, title: 'Too Many Requests' },
  'headers-too-large': { status: 431, title: 'Request Header Fields Too Large' },
  'internal-error': { status: 500, title: 'Internal Server Error' },
  'store-unavailable': { status: 503, title: 'Service Unavailable' },
  'credential-checks-busy': { status: 503, title: 'Service Unavailable', headers: { 'Retry-After': '1' } },
  'searches-busy': { status: 503, title: 'Service Unavailable', headers: { 'Retry-After': '1' } },
  // nginx's status for a client that closed its connection first: only the access log and the metrics see it.
  'client-closed-request': { status: 499, title: 'Client Closed Request' },
  'too-many-connections': { status: 503, title: 'Service Unavailable', headers: { 'Retry-After': '5' } },
  'metrics-unavailable': { status: 503, title: 'Service Unavailable' },
};

/** An error the HTTP layer raises on purpose, with everything its problem+json response needs. */
export class HttpProblem extends Error {
  constructor(
    readonly kind: ProblemKind,
    readonly detail: string,
    readonly extras: { errors?: readonly FieldError[]; headers?: Readonly<Record<string, string>> } = {},
  ) {
    super(detail);
    this.name = 'HttpProblem';
  }
}

/** Errors of reading a body (raw-body / inflation), by their `type`; co-body's JSON errors have none. */
const PARSER_ERRORS: Record<string, ProblemKind> = {
  'entity.too.large': 'payload-too-large',
  'encoding.unsupported': 'unsupported-media-type',
  'charset.unsupported': 'unsupported-media-type',
  'request.size.invalid': 'bad-request',
  'request.aborted': 'bad-request',
};

/** Classifies any thrown value; anything not raised on purpose is an internal error. */
function classify(error: unknown): HttpProblem {
  if (error instanceof HttpProblem) return error;
  if (error instanceof InvalidParameterError) {
    return new HttpProblem(error.kind, error.message, { errors: [{ path: `/${error.parameter}`, message: error.problem }] });
  }
  if (error instanceof DomainError) return new HttpProblem(error.kind, error.message);
  // Well-formed JSON, refused by the parser (@hapi/bourne) so that it cannot pollute prototypes.
  if (error instanceof SyntaxError && /forbidden prototype property/.test(error.message)) {
    return new HttpProblem('validation-failed', 'The request body has a __proto__ or constructor.prototype member, which is not allowed.');
  }
  const parserKind = PARSER_ERRORS[(error as { type?: string }).type ?? ''];
  if (parserKind === 'payload-too-large') {
    return new HttpProblem(parserKind, `The request body is larger than ${(error as { limit?: number }).limit} bytes.`);
  }
  if (parserKind) return new HttpProblem(parserKind, (error as Error).message);
  if (error instanceof SyntaxError && (error as { status?: number }).status === 400) {
    return new HttpProblem('malformed-json', `The request body is not valid JSON: ${error.message}.`);
  }
  return new HttpProblem('internal-error', 'The server could not complete the request.');
}

/** The status, fixed headers and JSON body of a problem. */
export function problemDocument(problem: HttpProblem, instance?: string) {
  const { status, title, headers } = PROBLEMS[problem.kind];
  const body = JSON.stringify({
    type: `urn:user-records:problem:${problem.kind}`,
    title,
    status,
    detail: problem.detail,
    ...(instance === undefined ? {} : { instance }),
    ...(problem.extras.errors ? { errors: problem.extras.errors } : {}),
  });
  return { status, headers: { ...headers, ...problem.extras.headers }, body };
}

/** The request path as a valid URI reference: stray `%` and characters a URI cannot hold are escaped. */
const asUriReference = (path: string) =>
  path.replace(/%(?![0-9A-Fa-f]{2})/g, '%25').replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@/%]/gu, (c) => encodeURIComponent(c));

/** Writes a problem as the response, and names its kind in `ctx.state.problem` for the metrics. */
export function sendProblem(ctx: Context, problem: HttpProblem): void {
  const { status, headers, body } = problemDocument(problem, asUriReference(ctx.path));
  ctx.state.problem = problem.kind;
  ctx.status = status;
  ctx.set(headers);
  ctx.type = 'application/problem+json';
  ctx.body = body;
}

/** Outermost middleware: every error becomes problem+json; failures nobody raised on purpose are logged, never shown. */
export function problemMiddleware(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const problem = classify(error);
      if (error instanceof StoreUnavailableError) {
        // An outage, not a bug: one line with the store's code, no stack (an outage fails many requests at once).
        logger.warn({ code: error.code, method: ctx.method, path: ctx.path }, 'store unavailable');
      } else if (error instanceof RequestAbandonedError) {
        logger.info({ method: ctx.method, path: ctx.path }, 'client went away; the work for its answer was stopped');
      } else if (error instanceof SearchesBusyError) {
        // A refusal of load on purpose (SEARCH_QUEUE): one line, no stack, and counted (rate_limited_total).
        logger.warn({ method: ctx.method, path: ctx.path }, 'search refused: too many searches waiting');
      } else if (PROBLEMS[problem.kind].status >= 500 && !(error instanceof HttpProblem)) {
        // Only what nobody raised on purpose is a server failure. A 5xx refusal raised on purpose (a full
        // queue of password checks, a worker's missing metrics) is logged and counted where it is decided.
        logger.error({ err: error, method: ctx.method, path: ctx.path }, 'request failed');
      }
      sendProblem(ctx, problem);
    }
  };
}
