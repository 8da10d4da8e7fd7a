import { contractViolation, findOperationId } from './contract-check.js';

/**
 * A fetch that checks every response against the contract before handing it over, so that any target
 * (server, mock, proxy) answering outside the contract fails the test that made the call.
 */
export function contractCheckingFetch(baseUrl: string): (request: Request) => Promise<Response> {
  const mount = new URL(baseUrl).pathname.replace(/\/$/, '');
  return async (request) => {
    const response = await fetch(request);
    const text = await response.clone().text();
    const contentType = response.headers.get('content-type') ?? '';
    let body: unknown = text === '' ? undefined : text;
    if (text !== '' && /json/.test(contentType)) body = JSON.parse(text);
    const path = new URL(request.url).pathname.slice(mount.length);
    const operationId = findOperationId(request.method, path);
    const violation =
      request.method === 'HEAD' ? undefined : contractViolation(operationId, { status: response.status, contentType, body, headers: response.headers });
    if (violation) {
      throw new Error(`${request.method} ${path} → ${response.status} breaks the contract: ${violation}\n${text}`);
    }
    return response;
  };
}
