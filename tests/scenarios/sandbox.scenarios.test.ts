import { TEST_CREDENTIALS, useTestServer } from '../support/test-server.js';
import { describeScenarios } from './user-records.scenarios.js';

// The client scenarios against the sandbox, as `make sandbox` starts it: the real service on an in-memory store.

const sut = useTestServer({ env: { SANDBOX: 'true', DATABASE_URL: 'sqlite::memory:' } });
describeScenarios('sandbox', () => ({ baseUrl: sut.server.url, credentials: TEST_CREDENTIALS }));
