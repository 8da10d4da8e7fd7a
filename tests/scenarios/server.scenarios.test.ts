import { TEST_CREDENTIALS, useTestServer } from '../support/test-server.js';
import { describeScenarios } from './user-records.scenarios.js';

// The client scenarios against the real server on SQLite.

const sut = useTestServer();
describeScenarios('server', () => ({ baseUrl: sut.server.url, credentials: TEST_CREDENTIALS }));
