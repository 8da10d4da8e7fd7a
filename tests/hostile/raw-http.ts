import { connect } from 'node:net';

// Sends bytes over a plain TCP socket and reads back whatever HTTP/1.x responses arrive. Nothing here
// validates or normalises the request: that is the point, the corpus sends what a real client would not.

/** One response as it came over the wire. */
export interface RawResponse {
  readonly httpVersion: string;
  readonly status: number;
  readonly reason: string;
  /** Header fields in wire order, names as sent. */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly body: Buffer;
}

/** Everything that happened on one connection. */
export interface RawExchange {
  /** Final (non-1xx) responses, in order. */
  readonly responses: RawResponse[];
  /** Interim 1xx responses (e.g. 100 Continue). */
  readonly interim: RawResponse[];
  /** The server closed (or reset) the connection before we did. */
  readonly closedByServer: boolean;
  /** Nothing conclusive arrived within the time limit. */
  readonly timedOut: boolean;
  /** A socket error such as ECONNRESET or EPIPE, if one occurred. */
  readonly socketError?: string;
  /** Bytes received that do not form a complete response (a cut-off or unparseable response). */
  readonly leftover: Buffer;
  /** Why `leftover` could not be parsed, when it could not. */
  readonly parseError?: string;
  readonly elapsedMs: number;
}

export interface RawSendOptions {
  readonly host?: string;
  readonly port: number;
  /** Gives up after this long in all (default 3000 ms). */
  readonly timeoutMs?: number;
  /** Half-closes our side after sending, telling the server no more bytes will come. */
  readonly halfClose?: boolean;
  /** The request is HEAD: final responses carry no body whatever their headers say. */
  readonly head?: boolean;
  /**
   * After a complete response, wait this long for more (pipelined requests, smuggled requests) before
   * closing; 0 (default) closes as soon as the first final response is complete.
   */
  readonly lingerMs?: number;
}

/** The value of the first header with this name (case-insensitive). */
export function headerOf(response: RawResponse, name: string): string | undefined {
  const lower = name.toLowerCase();
  return response.headers.find(([key]) => key.toLowerCase() === lower)?.[1];
}

type Parsed =
  | { readonly kind: 'response'; readonly response: RawResponse; readonly consumed: number }
  | { readonly kind: 'incomplete' }
  | { readonly kind: 'error'; readonly reason: string };

const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');

/** Parses a chunked body that starts at `start`; the offset just past it, or undefined if incomplete. */
function chunkedEnd(data: Buffer, start: number): { end: number; body: Buffer } | { error: string } | undefined {
  const parts: Buffer[] = [];
  let at = start;
  for (;;) {
    const lineEnd = data.indexOf(CRLF, at);
    if (lineEnd < 0) return undefined;
    const sizeText = data.subarray(at, lineEnd).toString('latin1').split(';')[0]!.trim();
    if (!/^[0-9a-fA-F]+$/.test(sizeText)) return { error: `bad chunk size ${JSON.stringify(sizeText)}` };
    const size = parseInt(sizeText, 16);
    at = lineEnd + 2;
    if (size === 0) {
      // Trailer fields, then an empty line.
      for (;;) {
        const end = data.indexOf(CRLF, at);
        if (end < 0) return undefined;
        if (end === at) return { end: end + 2, body: Buffer.concat(parts) };
        at = end + 2;
      }
    }
    if (data.length < at + size + 2) return undefined;
    parts.push(data.subarray(at, at + size));
    at += size + 2;
  }
}

function parseOne(data: Buffer, head: boolean, closed: boolean): Parsed {
  const headEnd = data.indexOf(HEAD_END);
  if (headEnd < 0) return closed && data.length > 0 ? { kind: 'error', reason: 'connection closed inside the response head' } : { kind: 'incomplete' };
  const lines = data.subarray(0, headEnd).toString('latin1').split('\r\n');
  const statusLine = /^(HTTP\/\d\.\d) (\d{3})(?: (.*))?$/.exec(lines[0] ?? '');
  if (!statusLine) return { kind: 'error', reason: `not a status line: ${JSON.stringify((lines[0] ?? '').slice(0, 100))}` };
  const headers: Array<readonly [string, string]> = [];
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) return { kind: 'error', reason: `not a header line: ${JSON.stringify(line.slice(0, 100))}` };
    headers.push([line.slice(0, colon), line.slice(colon + 1).trim()]);
  }
  const status = Number(statusLine[2]);
  const bodyStart = headEnd + 4;
  const make = (body: Buffer, consumed: number): Parsed => ({
    kind: 'response',
    response: { httpVersion: statusLine[1]!, status, reason: statusLine[3] ?? '', headers, body },
    consumed,
  });
  const partial: RawResponse = { httpVersion: statusLine[1]!, status, reason: statusLine[3] ?? '', headers, body: Buffer.alloc(0) };
  if ((status >= 100 && status < 200) || status === 204 || status === 304 || head) return make(Buffer.alloc(0), bodyStart);
  const transferEncoding = headerOf(partial, 'transfer-encoding');
  if (transferEncoding !== undefined && /chunked\s*$/i.test(transferEncoding)) {
    const chunked = chunkedEnd(data, bodyStart);
    if (chunked === undefined) return closed ? { kind: 'error', reason: 'connection closed inside a chunked body' } : { kind: 'incomplete' };
    if ('error' in chunked) return { kind: 'error', reason: chunked.error };
    return make(chunked.body, chunked.end);
  }
  const contentLength = headerOf(partial, 'content-length');
  if (contentLength !== undefined) {
    if (!/^\d+$/.test(contentLength)) return { kind: 'error', reason: `bad Content-Length ${JSON.stringify(contentLength)}` };
    const length = Number(contentLength);
    if (data.length < bodyStart + length) {
      return closed ? { kind: 'error', reason: `connection closed after ${data.length - bodyStart} of ${length} body bytes` } : { kind: 'incomplete' };
    }
    return make(data.subarray(bodyStart, bodyStart + length), bodyStart + length);
  }
  // Neither: the body runs until the server closes the connection.
  return closed ? make(data.subarray(bodyStart), data.length) : { kind: 'incomplete' };
}

/** Sends `request` verbatim and collects the responses; never rejects, never waits past `timeoutMs`. */
export function sendRaw(request: Buffer, options: RawSendOptions): Promise<RawExchange> {
  const timeoutMs = options.timeoutMs ?? 3000;
  const lingerMs = options.lingerMs ?? 0;
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = connect({ host: options.host ?? '127.0.0.1', port: options.port, allowHalfOpen: true });
    const responses: RawResponse[] = [];
    const interim: RawResponse[] = [];
    let buffer = Buffer.alloc(0);
    let parseError: string | undefined;
    let socketError: string | undefined;
    let closedByServer = false;
    let done = false;
    let linger: NodeJS.Timeout | undefined;

    const finish = (timedOut: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(overall);
      if (linger) clearTimeout(linger);
      socket.destroy();
      resolve({ responses, interim, closedByServer, timedOut, socketError, leftover: buffer, parseError, elapsedMs: Date.now() - started });
    };
    const overall = setTimeout(() => finish(responses.length === 0), timeoutMs);

    const parseAvailable = (closed: boolean) => {
      while (buffer.length > 0 && parseError === undefined) {
        const parsed = parseOne(buffer, options.head === true, closed);
        if (parsed.kind === 'incomplete') return;
        if (parsed.kind === 'error') {
          parseError = parsed.reason;
          return;
        }
        buffer = buffer.subarray(parsed.consumed);
        if (parsed.response.status < 200) interim.push(parsed.response);
        else responses.push(parsed.response);
      }
    };
    const afterData = () => {
      parseAvailable(false);
      if (parseError !== undefined) return finish(false);
      if (responses.length > 0 && buffer.length === 0) {
        if (lingerMs === 0) return finish(false);
        if (linger) clearTimeout(linger);
        linger = setTimeout(() => finish(false), lingerMs);
      }
    };
    const onClosed = () => {
      closedByServer = true;
      parseAvailable(true);
      finish(false);
    };

    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      afterData();
    });
    socket.on('end', onClosed);
    socket.on('close', onClosed);
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // EPIPE/ECONNRESET while we still write a large body is how servers refuse it; read what came.
      socketError = error.code ?? error.message;
    });
    socket.on('connect', () => {
      socket.write(request);
      if (options.halfClose) socket.end();
    });
  });
}
