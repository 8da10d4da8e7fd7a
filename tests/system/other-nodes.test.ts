import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describeScenarios } from '../scenarios/user-records.scenarios.js';
import { startServerCommand, type ServerProcess } from '../support/server-process.js';
import { TEST_CREDENTIALS } from '../support/test-server.js';
import { createTestStore, type TestStore } from '../support/test-store.js';

// The service runs on the pinned Node (.node-version: 24, on which make test runs) and on the other supported
// lines: 22 (the oldest, as package.json's engines say) and 26 (the newest). For each of those, a smoke run as
// an operator would do it on that Node: install the runtime packages (better-sqlite3 compiled against that
// Node's headers), build, start, and the client scenarios against it.

/** The other Node lines, newest release of each in the npm registry when this was written. */
const OTHER_NODES = ['22.23.3', '26.10.0'];

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe.each(OTHER_NODES)('on Node %s', (version) => {
  let store: TestStore;
  let server: ServerProcess;
  let reported = '';
  beforeAll(async () => {
    // Cached in .tools/ between runs: npm ci again only when package-lock.json changed (about 70 s).
    const node = execFileSync('scripts/build-on-node.sh', [version, `.tools/on-node-${version}`], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }).trim();
    store = await createTestStore('sqlite');
    server = await startServerCommand([node, `.tools/on-node-${version}/dist/server/main.js`], store);
    reported = execFileSync(node, ['-p', 'process.version'], { encoding: 'utf8' }).trim();
  }, 300_000);
  afterAll(async () => {
    await server?.stop();
    await store?.drop();
  });

  test('the server runs on that Node', () => {
    expect(reported).toBe(`v${version}`);
    expect(server.output()).toContain('"msg":"user records service listening"');
  });

  describeScenarios('server', () => ({ baseUrl: server.url, credentials: TEST_CREDENTIALS }));
});
