import { TEST_CREDENTIALS, useTestServer } from '../support/test-server.js';
import { describeEachDialect } from '../support/test-store.js';
import { describeScenarios } from './user-records.scenarios.js';

// The client scenarios against the real server, on each database.

describeEachDialect((dialect) => {
  const sut = useTestServer({ dialect });
  describeScenarios('server', () => ({ baseUrl: sut.server.url, credentials: TEST_CREDENTIALS }));
});
