import { setupServer } from 'msw/node';
import { createMockHandlers } from '../../client/src/msw.js';
import { TEST_CREDENTIALS } from '../support/test-server.js';
import { describeScenarios } from './user-records.scenarios.js';

// The client scenarios against the MSW handlers of the client package, in Node (msw/node), as a frontend's
// Vitest or Jest setup runs them: no server, every request answered in this process.

const baseUrl = 'http://user-records.test';
const handlers = createMockHandlers({ baseUrl, credentials: TEST_CREDENTIALS });
const mocks = setupServer(...handlers);
beforeAll(() => mocks.listen({ onUnhandledRequest: 'error' }));
afterAll(() => mocks.close());

describeScenarios('msw', () => ({ baseUrl, credentials: TEST_CREDENTIALS }));
