import { startSandbox, type Sandbox } from '../../client/node/sandbox.js';
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
