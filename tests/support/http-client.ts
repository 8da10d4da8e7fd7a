import { contractViolation, findOperationId } from './contract-check.js';
import { TEST_CREDENTIALS } from './test-server.js';

/** A response, its body decoded by media type (undefined when empty). */
export interface TestResponse<T = any> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
  readonly text: string;
}

/** Options of one request. `json` is serialised with Content-Type application/json; `raw` is sent as is. */
export interface RequestOptions {
  readonly json?: unknown;
  readonly raw?: string;
  readonly headers?: Record<string, string>;
  /** Skip the contract check, for responses the test inspects for a different reason. */
  readonly unchecked?: boolean;
}

/** `Authorization` header for the test server's credentials, or for the ones given. */
export function basicAuth(username: string = TEST_CREDENTIALS.username, password: string = TEST_CREDENTIALS.password) {
  return { authorization: `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}` };
}

/**
 * A plain fetch-based client for component tests. Every response is checked against the contract, so a
 * test cannot pass on a response that the spec does not allow.
 */
export function httpClient(baseUrl: string) {
  const mount = new URL(baseUrl).pathname.replace(/\/$/, '');
  async function request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<TestResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    let body: string | undefined = options.raw;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
    const text = await response.text();
    const contentType = response.headers.get('content-type') ?? '';
    const decoded = text === '' ? undefined : /json/.test(contentType) ? JSON.parse(text) : text;
    if (!options.unchecked) {
      const pathOnly = new URL(`${baseUrl}${path}`).pathname.slice(mount.length);
      const violation = contractViolation(findOperationId(method, pathOnly), {
        status: response.status,
        contentType,
        body: decoded,
        headers: response.headers,
      });
      if (violation) throw new Error(`${method} ${path} → ${response.status} breaks the contract: ${violation}\n${text}`);
    }
    return { status: response.status, headers: response.headers, body: decoded as T, text };
  }
  return {
    request,
    get: <T = any>(path: string, options?: RequestOptions) => request<T>('GET', path, options),
    post: <T = any>(path: string, json: unknown, options?: RequestOptions) => request<T>('POST', path, { json, ...options }),
    put: <T = any>(path: string, json: unknown, options?: RequestOptions) => request<T>('PUT', path, { json, ...options }),
    delete: <T = any>(path: string, options?: RequestOptions) => request<T>('DELETE', path, options),
  };
}

/** The client type, for helpers that take one. */
export type HttpClient = ReturnType<typeof httpClient>;
