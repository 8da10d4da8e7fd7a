import { Agent, request } from 'node:http';
import { seedPostgresUsers, seedUsers } from '../support/bulk-seed.js';
import { counterValue } from '../support/fault-load.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { requestFrom } from '../support/request-from.js';
import { createTestStore, describeEachDialect, type Dialect, type TestStore } from '../support/test-store.js';

// Searches that examine users one by one wait for slots (search-turnstile.ts). A flood of costly searches
// from a few clients must not take every slot: another client's cheap search is still answered, the flooding
// clients are refused beyond their share, and the refusals are counted and logged as a summary, not a line each.

const USERS = 100_000;
/** Two letters: the substring index cannot narrow them, so each search examines users one by one. */
const COSTLY = 'zq';
const FLOODERS = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];
/** Connections each flooding client keeps busy: under the service's own per-client cap of 100. */
const CONNECTIONS = 95;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `connections` loops of costly searches from one local address, each a new text to the reply cache (its
 * `_` is ignored by the service), until `stop`; resolves with how many of them were refused (503).
 */
async function flood(url: string, from: string, connections: number, stop: Promise<void>): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections, localAddress: from });
  let stopped = false;
  void stop.then(() => (stopped = true));
  let refused = 0;
  let n = 0;
  const loop = async () => {
    while (!stopped) {
      const status = await new Promise<number>((resolve) => {
        const req = request(`${url}/users?q=${COSTLY}&limit=20&_=${from}-${n++}`, { agent }, (res) => {
          res.resume();
          res.once('end', () => resolve(res.statusCode ?? 0));
        });
        req.once('error', () => resolve(0));
        req.end();
      });
      if (status === 503) refused++;
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  agent.destroy();
  return refused;
}

describeEachDialect((dialect: Dialect) => {
  let store: TestStore;
  let server: ServerProcess;
  beforeAll(async () => {
    store = await createTestStore(dialect);
    await (await startServerProcess(store, { LOG_LEVEL: 'info' })).stop();
    if (dialect === 'sqlite') seedUsers(store, USERS);
    else await seedPostgresUsers(store, USERS);
    // The service's own per-client bounds, as it runs by default.
    server = await startServerProcess(store, { LOG_LEVEL: 'info', MAX_CONNECTIONS_PER_CLIENT: '100', SEARCH_QUEUE_PER_CLIENT: '16' });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await store?.drop();
  });

  test("a flood of costly searches from 3 clients: another client's cheap searches are answered, the flooders are refused beyond their share, counted, and logged once a second", async () => {
    const refusalsBefore = await counterValue(server.url, 'rate_limited_total');
    let end!: () => void;
    const stop = new Promise<void>((resolve) => (end = resolve));
    const floods = FLOODERS.map((from) => flood(server.url, from, CONNECTIONS, stop));
    const started = performance.now();
    await sleep(2000);
    const victim: number[] = [];
    for (let i = 0; i < 20; i++) {
      // A new text each time, so that no kept reply answers it (the service keeps a complete search's reply).
      const answer = await requestFrom(`${server.url}/users?q=Tobias&limit=5&_=victim-${i}`, { from: '127.0.0.1' });
      victim.push(answer.status);
      await sleep(200);
    }
    end();
    const refused = (await Promise.all(floods)).reduce((sum, count) => sum + count, 0);
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `victim: ${victim.filter((status) => status === 200).length} of ${victim.length} answered 200; flooders refused ${refused} times in ${seconds.toFixed(1)} s`,
    );
    expect(victim.filter((status) => status === 200).length).toBeGreaterThanOrEqual(18);
    expect(victim.every((status) => status === 200 || status === 503)).toBe(true);
    // Every refusal is counted; the log says how many at most about once a second, not once each.
    expect(refused).toBeGreaterThan(0);
    const allRefused = refused + victim.filter((status) => status === 503).length;
    expect((await counterValue(server.url, 'rate_limited_total')) - refusalsBefore).toBe(allRefused);
    // The last summary follows within a second of the last refusal.
    await sleep(1500);
    const lines = server
      .output()
      .split('\n')
      .filter((line) => line.includes('"msg":"searches refused"'));
    expect(lines.length).toBeLessThanOrEqual(2 * Math.ceil(seconds) + 2);
    expect(lines.reduce((sum, line) => sum + (JSON.parse(line) as { refused: number }).refused, 0)).toBe(allRefused);
  }, 120_000);
});
