import { request } from 'node:http';

/** A response seen by requestFrom: status, headers, the body (parsed when JSON) and how long it took. */
export interface AddressedResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: any;
  readonly contentType: string;
  readonly ms: number;
}

/** Options of requestFrom: the loopback address to send from (127.0.0.x are all this machine), headers, a JSON body. */
export interface AddressedRequest {
  readonly from: string;
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly json?: unknown;
  /** A connection of its own, closed after the answer, rather than one kept alive from an earlier request. */
  readonly newConnection?: boolean;
  /** Rejects, and closes the connection, when no whole answer came within this time. */
  readonly timeoutMs?: number;
}

/** One request from a chosen local address, so that a test can be several clients. */
export function requestFrom(
  url: string,
  { from, method = 'GET', headers = {}, json, newConnection = false, timeoutMs }: AddressedRequest,
): Promise<AddressedResponse> {
  const body = json === undefined ? undefined : JSON.stringify(json);
  const allHeaders = body === undefined ? headers : { 'content-type': 'application/json', ...headers };
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(url, { localAddress: from, method, headers: allHeaders, ...(newConnection ? { agent: false } : {}) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        const contentType = res.headers['content-type'] ?? '';
        const parsed = text !== '' && contentType.includes('json') ? JSON.parse(text) : text;
        resolve({ status: res.statusCode!, headers: res.headers, body: parsed, contentType, ms: performance.now() - started });
      });
    });
    req.on('error', reject);
    if (timeoutMs !== undefined) {
      const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      req.once('close', () => clearTimeout(timer));
    }
    req.end(body);
  });
}

/** `Authorization: Basic` for a user name and password. */
export const basicHeader = (username: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`,
});
