import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { excerpt } from '../errors/excerpt.js';
import { HttpProblem, problemDocument } from '../errors/problem.js';
import { API_SECURITY_HEADERS } from '../security/browser-headers.js';

// Answers Node gives before a request reaches Koa, written as problem+json like every other.

/** Largest request head (request line and headers) accepted; a larger one gets 431. */
export const MAX_HEADER_BYTES = 16 * 1024;

/**
 * Requests Node's parser refuses never reach Koa: answer them here, as problem+json too.
 * https://nodejs.org/api/http.html#event-clienterror
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  const code = error.code ?? '';
  const responding = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
  // The client hung up mid-request: nobody is left to read an answer (and one may already have been sent).
  const gone = code === 'ECONNRESET' || code === 'HPE_INVALID_EOF_STATE';
  if (gone || !socket.writable || responding) {
    socket.destroy();
    return;
  }
  const problem =
    code === 'HPE_HEADER_OVERFLOW'
      ? new HttpProblem('headers-too-large', `The request head is larger than ${MAX_HEADER_BYTES} bytes.`)
      : code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new HttpProblem('request-timeout', 'The request was not received in time.')
        : new HttpProblem('bad-request', 'The request is not valid HTTP/1.1.');
  socket.end(rawProblemResponse(problem));
}

/** A whole HTTP/1.1 problem+json response, for the few answers written straight to a socket. */
function rawProblemResponse(problem: HttpProblem): string {
  const { status, headers, body } = problemDocument(problem);
  const extra = Object.entries({ ...API_SECURITY_HEADERS, ...headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json\r\n${extra}` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/** A connection cap is reached: a 503 the client can act on, written to a socket Node never parses. */
export function refuseConnection(socket: Socket, detail: string): void {
  socket.end(rawProblemResponse(new HttpProblem('too-many-connections', detail)));
}

/** CONNECT asks for a tunnel, which this service does not offer. */
export function refuseTunnel(_request: IncomingMessage, socket: Duplex): void {
  socket.end(
    rawProblemResponse(new HttpProblem('method-not-allowed', 'CONNECT is not supported.', { headers: { Allow: 'GET, HEAD, OPTIONS, POST, PUT, DELETE' } })),
  );
}

/** An Expect header other than 100-continue cannot be met (RFC 9110 §10.1.1). */
export function refuseExpectation(request: IncomingMessage, response: ServerResponse): void {
  // Like every answer written before the router, it names no instance: no operation was chosen.
  const { status, headers, body } = problemDocument(new HttpProblem('expectation-failed', `Expect: ${excerpt(request.headers.expect ?? '')} cannot be met.`));
  response.writeHead(status, { ...API_SECURITY_HEADERS, ...headers, 'Content-Type': 'application/problem+json', Connection: 'close' }).end(body);
}
