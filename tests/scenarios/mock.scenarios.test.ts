import { startPrism, type PrismProcess } from '../support/prism.js';
import { describeScenarios } from './user-records.scenarios.js';

// The same scenarios against the Prism mock of the contract, as frontend teams run it (`make mock`):
// proof that the mock answers what the real server answers.

let prism: PrismProcess;
beforeAll(async () => {
  prism = await startPrism('mock');
});
afterAll(() => prism?.stop());

describeScenarios('mock', () => ({ baseUrl: prism.url, credentials: { username: 'admin', password: 'any' } }));
