import { DomainError, InvalidParameterError, type DomainErrorKind } from '../../domain/errors.js';
import type { FieldError } from '../contract/contract.js';
import { EXCERPT_CHARACTERS, excerpt, INSTANCE_CHARACTERS } from './excerpt.js';

// What every application/problem+json answer (RFC 9457, https://www.rfc-editor.org/rfc/rfc9457) is made of:
// its kinds, the classification of whatever was thrown, and the document. Browser-safe (the MSW handlers use
// it); problem-middleware.ts writes it into Koa's responses.

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
  | 'misdirected-request'
  | 'metrics-unavailable';

/** The name of a kind of problem. */
export type ProblemKind = DomainErrorKind | HttpProblemKind;

/** Kinds of problem the service reports, each with its status, title and any headers it always carries. */
export const PROBLEMS: Record<ProblemKind, { status: number; title: string; headers?: Record<string, string> }> = {
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
  'misdirected-request': { status: 421, title: 'Misdirected Request' },
  'validation-failed': { status: 422, title: 'Validation failed' },
  'idempotency-key-reused': { status: 422, title: 'Idempotency-Key reused' },
  'expectation-failed': { status: 417, title: 'Expectation Failed' },
  'too-many-attempts': { status: 429, title: 'Too Many Requests' },
  'too-many-writes': { status: 429, title: 'Too Many Requests' },
  'headers-too-large': { status: 431, title: 'Request Header Fields Too Large' },
  'internal-error': { status: 500, title: 'Internal Server Error' },
  'store-unavailable': { status: 503, title: 'Service Unavailable' },
  // Not 503, which says of a write that it was not made: the store did not say whether this one was.
  'write-outcome-unknown': { status: 504, title: 'Gateway Timeout' },
  'credential-checks-busy': { status: 503, title: 'Service Unavailable', headers: { 'Retry-After': '1' } },
  'searches-busy': { status: 503, title: 'Service Unavailable', headers: { 'Retry-After': '1' } },
  // nginx's status for a client that closed its connection first: only the access log and the metrics see it.
  'client-closed-request': { status: 499, title: 'Client Closed Request' },
  'too-many-connections': { status: 503, title: 'Service Unavailable', headers: { 'Retry-After': '5' } },
  'metrics-unavailable': { status: 503, title: 'Service Unavailable' },
};

/** How many frames V8 (Node, Chromium) captures in a new Error's stack; other engines have no such limit. */
const v8Error = Error as ErrorConstructor & { stackTraceLimit?: number };

/**
 * An error the HTTP layer raises on purpose, with everything its problem+json response needs. It is an answer,
 * not a fault: made without a stack trace, which nothing reads (a fault is logged with the error that caused it)
 * and which is dear to capture (Koa's frames): a cost a scanner's flood of unknown paths, or of requests without
 * credentials, would make the service pay for each.
 */
export class HttpProblem extends Error {
  readonly kind: ProblemKind;
  readonly detail: string;
  readonly extras: { errors?: readonly FieldError[]; headers?: Readonly<Record<string, string>> };

  constructor(kind: ProblemKind, detail: string, extras: HttpProblem['extras'] = {}) {
    const limit = v8Error.stackTraceLimit;
    if (limit !== undefined) v8Error.stackTraceLimit = 0;
    try {
      super(detail);
    } finally {
      if (limit !== undefined) v8Error.stackTraceLimit = limit;
    }
    this.name = 'HttpProblem';
    this.kind = kind;
    this.detail = detail;
    this.extras = extras;
  }
}

/** Most characters of a body parser's message (which may quote the body, its charset or its encoding). */
const PARSER_MESSAGE_CHARACTERS = 2 * EXCERPT_CHARACTERS;

/** Errors of reading a body (raw-body / inflation), by their `type`; co-body's JSON errors have none. */
const PARSER_ERRORS: Record<string, ProblemKind> = {
  'entity.too.large': 'payload-too-large',
  'encoding.unsupported': 'unsupported-media-type',
  'charset.unsupported': 'unsupported-media-type',
  'request.size.invalid': 'bad-request',
  'request.aborted': 'bad-request',
};

/** Classifies any thrown value; anything not raised on purpose is an internal error. */
export function classify(error: unknown): HttpProblem {
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
  // raw-body's messages repeat the charset or encoding the request named.
  if (parserKind) return new HttpProblem(parserKind, excerpt((error as Error).message, PARSER_MESSAGE_CHARACTERS));
  if (error instanceof SyntaxError && (error as { status?: number }).status === 400) {
    return new HttpProblem('malformed-json', `The request body is not valid JSON: ${excerpt(error.message, PARSER_MESSAGE_CHARACTERS)}.`);
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

/**
 * The request path as a valid URI reference: stray `%` and characters a URI cannot hold are escaped, and it
 * is cut after INSTANCE_CHARACTERS (never inside an escape), so that a long path cannot make a long answer.
 */
export function asUriReference(path: string): string {
  const escaped = path.replace(/%(?![0-9A-Fa-f]{2})/g, '%25').replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@/%]/gu, (c) => encodeURIComponent(c));
  return escaped.length <= INSTANCE_CHARACTERS ? escaped : escaped.slice(0, INSTANCE_CHARACTERS).replace(/%[0-9A-Fa-f]?$/, '');
}
