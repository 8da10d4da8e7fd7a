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
