import contentType from 'content-type';
import { excerpt } from '../errors/excerpt.js';
import { HttpProblem } from '../errors/problem.js';

// The checks of a request that come before its operation runs, written once for the Koa router and for the
// MSW handlers of the client package (fetch-dispatch.ts), so that both refuse the same requests alike.
// Browser-safe.

/**
 * Refuses a body that is missing, compressed, or not of the operation's media types, before a byte of it is
 * read (so no compressed body is ever inflated). Without Content-Length or Transfer-Encoding a request has no
 * body, whatever its Content-Type says (RFC 9112 §6.3). Only operations that read a body ask: a Content-Encoding
 * on a request without one, or on a GET, describes nothing the service reads.
 */
export function bodyTypeProblem(given: string, hasBody: boolean, bodyTypes: readonly string[], coding = ''): HttpProblem | undefined {
  if (!hasBody) return new HttpProblem('malformed-json', 'The request has no body; a JSON value is required.');
  if (coding !== '' && coding.trim().toLowerCase() !== 'identity') {
    return new HttpProblem('unsupported-media-type', `Content-Encoding ${excerpt(coding)} is not supported; send the body uncompressed.`);
  }
  if (!bodyTypes.includes(mediaTypeOf(given) ?? '')) {
    return new HttpProblem('unsupported-media-type', `The request body must be ${bodyTypes.join(' or ')} (got ${excerpt(given) || 'none'}).`);
  }
  return undefined;
}

/** The media type of a Content-Type header, lower case, without parameters; undefined unless well-formed (RFC 9110 §8.3). */
function mediaTypeOf(header: string): string | undefined {
  try {
    return contentType.parse(header).type;
  } catch {
    return undefined;
  }
}

/** A body of only white space; the JSON parser (non-strict) would hand it over as '', as it does the JSON string "". */
export const isEmptyBody = (text: string): boolean => text.trim() === '';
export const emptyBodyProblem = () => new HttpProblem('malformed-json', 'The request body is empty; a JSON value is required.');

/** The `Allow` header of a path whose operations use these methods: HEAD with GET, and always OPTIONS. */
export const allowOf = (methods: readonly string[]): string =>
  [...new Set([...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'])].sort().join(', ');

/** A method the contract does not declare on a known path. */
export const methodNotAllowed = (method: string, allow: string) =>
  new HttpProblem('method-not-allowed', `${excerpt(method)} is not allowed here; use ${allow}.`, { headers: { Allow: allow } });

/** A path the service does not have, with the way to the ones it has (the API reference, at `docs`). */
export const noRoute = (method: string, path: string, docs: string) =>
  new HttpProblem('not-found', `No route matches ${excerpt(method)} ${excerpt(path)}. The API reference is at ${docs}.`);
