import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startPrism, type PrismProcess } from '../support/prism.js';

// The proxy target is only a guard if Prism, started the way proxy.scenarios.test.ts starts it, refuses a
// response that breaks the contract. An upstream that is not our service (so nothing of ours is faked)
// answers deliberately wrong bodies; Prism must turn each into a 500 that names the violation.
// (Prism lets an undeclared status through with a warning: contractCheckingFetch is what catches that.)

let upstream: Server;
let prism: PrismProcess;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    const wrong: Record<string, [number, string, unknown]> = {
      '/users/1': [200, 'application/json', { id: '1', firstName: 'A', lastName: 'B', email: 'a@example.com' }],
      '/api/users/1': [200, 'application/json', { id: 1, email: 'a@example.com', first_name: 'A', last_name: 'B' }],
      '/users/2': [200, 'text/html', '<p>hello</p>'],
    };
    const [status, type, body] = wrong[req.url ?? ''] ?? [404, 'text/plain', 'nothing'];
    res.writeHead(status, { 'content-type': type }).end(typeof body === 'string' ? body : JSON.stringify(body));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const { port } = upstream.address() as AddressInfo;
  prism = await startPrism(['proxy', `http://127.0.0.1:${port}`], ['--errors', '--validate-request=false']);
});
afterAll(async () => {
  await prism?.stop();
  await new Promise((resolve) => upstream?.close(resolve));
});

test.each([
  ['a string id', '/users/1'],
  ['a shape A user without its data wrapper', '/api/users/1'],
  ['an undeclared media type', '/users/2'],
])('a response with %s becomes a 500 naming the violation', async (_case, path) => {
  const response = await fetch(`${prism.url}${path}`);
  expect(response.status).toBe(500);
  const problem = (await response.json()) as { title: string; validation?: { location: string[] }[] };
  expect(problem.title).toBe('Request/Response not valid');
  expect(problem.validation?.[0]?.location[0]).toBe('response');
});
