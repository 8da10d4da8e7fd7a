import { startSandbox, type Sandbox } from '../../client/node/sandbox.js';
import { getWithHost } from '../support/host-request.js';
import { TEST_CREDENTIALS } from '../support/test-server.js';
import { describeScenarios } from './user-records.scenarios.js';

// The client scenarios against `npx user-records-sandbox`, the sandbox the client package carries: the
// in-memory service of the MSW handlers, served over node:http on a free port.

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, credentials: TEST_CREDENTIALS });
});
afterAll(() => sandbox?.close());

describeScenarios('sandbox', () => ({ baseUrl: sandbox.url, credentials: TEST_CREDENTIALS }));

test('a body that never ends is refused at the size limit, not read to its end', async () => {
  const chunk = new TextEncoder().encode(`{"firstName":"${'x'.repeat(16 * 1024)}`);
  const endless = new ReadableStream<Uint8Array>({ pull: (controller) => controller.enqueue(chunk) });
  const response = await fetch(`${sandbox.url}/users`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: endless,
    duplex: 'half',
  } as RequestInit);
  expect(response.status).toBe(413);
  expect(await response.json()).toMatchObject({ status: 413 });
}, 30_000);

test('on a loopback address it answers its IP addresses and localhost only, as the service does: a rebound page gets 421', async () => {
  const port = new URL(sandbox.url).port;
  const refused = await getWithHost(sandbox.url, '/api/users/2', `rebind.example:${port}`);
  expect(refused).toMatchObject({ status: 421, type: 'application/problem+json' });
  expect(JSON.parse(refused.body)).toEqual({
    type: 'urn:user-records:problem:misdirected-request',
    title: 'Misdirected Request',
    status: 421,
    detail: 'This server does not answer for the host rebind.example: it answers its IP addresses, localhost, and the names ALLOWED_HOSTS lists.',
    instance: '/api/users/2',
  });
  expect((await getWithHost(sandbox.url, '/api/users/2', `localhost:${port}`)).status).toBe(200);
  const listed = await startSandbox({ port: 0, allowedHosts: ['rebind.example'] });
  try {
    expect((await getWithHost(listed.url, '/api/users/2', 'rebind.example')).status).toBe(200);
  } finally {
    await listed.close();
  }
});
