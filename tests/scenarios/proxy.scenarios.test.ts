import { startPrism, type PrismProcess } from '../support/prism.js';
import { TEST_CREDENTIALS, useTestServer } from '../support/test-server.js';
import { describeScenarios } from './user-records.scenarios.js';

// The same scenarios against the real server behind `prism proxy --errors`: Prism, an independent
// validator, checks every real response against the contract and turns any violation into a 500.
// Request validation is off so that invalid requests reach the server and its errors are checked too.

const sut = useTestServer();
let prism: PrismProcess;
beforeAll(async () => {
  prism = await startPrism(['proxy', sut.server.url], ['--errors', '--validate-request=false']);
});
afterAll(() => prism?.stop());

describeScenarios('proxy', () => ({ baseUrl: prism.url, credentials: TEST_CREDENTIALS }));
