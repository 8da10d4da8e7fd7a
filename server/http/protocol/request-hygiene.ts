import type { Middleware } from 'koa';
import { HttpProblem } from '../errors/problem.js';

/** `host[:port]` as RFC 9110 §7.2 allows it: a reg-name, IPv4 or bracketed IPv6, and an optional port. */
const HOST = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~!$&'()*+,;=%-]+)(:\d{1,5})?$/;

/** True for a `host[:port]` a URL may carry (RFC 9110 §7.2). */
export const isValidHost = (host: string) => HOST.test(host);

/** How many Host headers a request carries; Node keeps only the first in `headers`. */
function hostHeaders(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const name = rawHeaders[index]!;
    if (name.length === 4 && name.toLowerCase() === 'host') count++;
  }
  return count;
}

/**
 * Refuses requests whose framing or addressing is ambiguous, before anything reads them (RFC 9112):
 * no or several or malformed Host headers, and transfer codings other than chunked. Node passes these on;
 * proxies in front might read them differently. (Compressed bodies are refused where bodies are read:
 * request-checks.ts.)
 */
export const requestHygiene: Middleware = (ctx, next) => {
  const { headers } = ctx.req;
  if (ctx.req.httpVersion === '1.1' && hostHeaders(ctx.req.rawHeaders) !== 1) {
    throw new HttpProblem('bad-request', 'An HTTP/1.1 request must carry exactly one Host header.');
  }
  const host = headers.host;
  if (host !== undefined && host !== '' && !isValidHost(host)) throw new HttpProblem('bad-request', 'The Host header is not a valid host.');
  const transfer = headers['transfer-encoding'];
  if (transfer !== undefined && transfer !== '' && transfer.trim().toLowerCase() !== 'chunked') {
    throw new HttpProblem('bad-request', 'Transfer-Encoding other than chunked is not supported.');
  }
  return next();
};
