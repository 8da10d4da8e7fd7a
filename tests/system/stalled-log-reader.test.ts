import { startServerProcess } from '../support/server-process.js';
import { createTestStore, type TestStore } from '../support/test-store.js';

// The server logs to stdout, usually a pipe to a log shipper. A shipper that stops reading fills the pipe
// (64 KiB); requests must still be answered, and the lines held meanwhile must arrive once it reads again.

const REQUESTS = 3000;
const CONCURRENCY = 20;

let store: TestStore;
beforeEach(async () => {
  store = await createTestStore('sqlite');
});
afterEach(() => store.drop());

test('requests are answered while nobody reads the log, and no line is lost', async () => {
  const server = await startServerProcess(store);
  try {
    server.pauseOutput();
    let next = 0;
    const statuses: number[] = [];
    const client = async () => {
      while (next < REQUESTS) {
        const id = `stalled-${++next}`;
        const response = await fetch(`${server.url}/users/1`, { headers: { 'x-request-id': id }, signal: AbortSignal.timeout(5000) });
        await response.arrayBuffer();
        statuses.push(response.status);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, client));
    expect(statuses).toHaveLength(REQUESTS);
    expect(statuses.every((status) => status === 200)).toBe(true);
    // Far more than a pipe holds was logged (two debug lines a request) while the pipe was full.
    server.resumeOutput();
    const logged = async () => {
      for (let waited = 0; waited < 10_000; waited += 100) {
        if (server.output().includes(`"requestId":"stalled-${REQUESTS}"`)) return true;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return false;
    };
    expect(await logged()).toBe(true);
    const lines = server
      .output()
      .split('\n')
      .filter((line) => line.includes('"msg":"request"') && line.includes('stalled-'));
    expect(lines).toHaveLength(REQUESTS);
  } finally {
    await server.stop();
  }
}, 60_000);
