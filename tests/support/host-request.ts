import { request } from 'node:http';

/**
 * GET `path` naming this Host (which fetch() cannot set), with these headers; its status, content type and body.
 * What a page that points its own name at a server on this machine (DNS rebinding) makes a browser send.
 */
export function getWithHost(
  url: string,
  path: string,
  host: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; type: string | undefined; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const sent = request({ hostname, port, path, headers: { ...headers, host } }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode!, type: response.headers['content-type'], body }));
    });
    sent.on('error', reject);
    sent.end();
  });
}
