import pg from 'pg';
import { contractCheckingFetch } from '../support/checking-fetch.js';
import { buildUserInput } from '../support/builders.js';
import { counterValue } from '../support/fault-load.js';
import { allowedBefore429, failedLogin, LIMIT, LIMIT_ENV, login, REDIS_URL, redisPrefix, testWithRedis } from '../support/limit-budget.js';
import { basicHeader } from '../support/request-from.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { createTestStore, postgresAvailable, postgresQuery, type TestStore } from '../support/test-store.js';
import { TEST_CREDENTIALS } from '../support/test-server.js';

// When the shared store of the limits fails or does not answer in time, a count is never kept anywhere else:
// a credential check is refused (503 credential-checks-busy, Retry-After) before any password is checked, and
// a write is refused (503, Retry-After) before it begins; each answer stays bounded. Requests without
// credentials still get the 401 challenge at once. The outage is logged once and counted in
// rate_limit_store_unavailable_total; once the store answers, the budgets go on from what it holds.

const UNAVAILABLE = 'shared rate-limit store unavailable';
const RECOVERED = 'shared rate-limit store answers again';
const linesWith = (server: ServerProcess, text: string) =>
  server
    .output()
    .split('\n')
    .filter((line) => line.includes(text));

/** A request whose answer must be one the contract declares; its status, problem type, Retry-After and time. */
async function asked(url: string, path: string, init: RequestInit = {}) {
  const started = performance.now();
  const response = await contractCheckingFetch(url)(new Request(`${url}${path}`, init));
  const body = (await response.json().catch(() => undefined)) as { type?: string } | undefined;
  return { status: response.status, type: body?.type, retryAfter: response.headers.get('retry-after'), ms: performance.now() - started };
}

const guess = (url: string) => asked(url, '/protected-resource', { headers: basicHeader(TEST_CREDENTIALS.username, 'wrong') });
const create = (url: string) =>
  asked(url, '/users', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(buildUserInput()) });
const users = async (url: string) => Number((await fetch(`${url}/users?limit=1`)).headers.get('x-total-count'));
/** Requests of one limit refused because its store did not answer (the series' labels written out, as in the text). */
const refusedUncounted = (url: string, limit: string) => counterValue(url, `rate_limit_store_unavailable_total\\{limit="${limit}"\\}`);

/**
 * What the limits answer while their store does not: guesses and a create refused with 503 and Retry-After
 * within `boundMs` each, no password checked, nothing written, and the challenge for a request without credentials.
 */
async function expectRefusedUncounted(url: string, boundMs: number) {
  const [checks, stored] = [await counterValue(url, 'auth_failures_total'), await users(url)];
  const guesses = [await guess(url), await guess(url), await guess(url)];
  expect(guesses.map(({ status, type, retryAfter }) => ({ status, type, retryAfter }))).toEqual(
    guesses.map(() => ({ status: 503, type: 'urn:user-records:problem:credential-checks-busy', retryAfter: '1' })),
  );
  const write = await create(url);
  expect({ status: write.status, type: write.type, retryAfter: write.retryAfter }).toEqual({
    status: 503,
    type: 'urn:user-records:problem:store-unavailable',
    retryAfter: '1',
  });
  expect(Math.max(...[...guesses, write].map((answer) => answer.ms))).toBeLessThan(boundMs);
  expect(await counterValue(url, 'auth_failures_total')).toBe(checks);
  expect(await users(url)).toBe(stored);
  const challenged = await asked(url, '/protected-resource');
  expect(challenged.status).toBe(401);
  expect(await refusedUncounted(url, 'credentials')).toBeGreaterThanOrEqual(3);
  expect(await refusedUncounted(url, 'writes')).toBeGreaterThanOrEqual(1);
}

async function poll(done: () => Promise<boolean>, ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 200))) {
    if (await done()) return true;
  }
  return false;
}

/** Waits for the store to count again (a guess checked), then for the line that says so, written asynchronously. */
async function expectCountedAgain(url: string) {
  expect(await poll(async () => (await failedLogin(url)) === 401, 20_000)).toBe(true);
  await poll(async () => linesWith(server!, RECOVERED).length > 0, 5000);
  expect(linesWith(server!, RECOVERED)).toHaveLength(1);
}

let proxy: TcpProxy | undefined;
let server: ServerProcess | undefined;
let store: TestStore | undefined;
const { prefix, clean } = redisPrefix();

afterEach(async () => {
  await server?.stop('SIGKILL');
  await proxy?.close();
  await store?.drop();
  await clean();
  [server, proxy, store] = [undefined, undefined, undefined];
});

testWithRedis(
  'Redis blackholed: credential checks and writes refused (503) within a bound, none counted elsewhere; one log line; the budget goes on once Redis answers',
  async () => {
    const redis = new URL(REDIS_URL);
    proxy = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
    store = await createTestStore('sqlite');
    server = await startServerProcess(store, { ...LIMIT_ENV, REDIS_URL: proxy.via(REDIS_URL), RATE_LIMIT_KEY_PREFIX: prefix });
    expect(await failedLogin(server.url)).toBe(401);
    await proxy.setMode('blackhole');
    await expectRefusedUncounted(server.url, 2000);
    expect(linesWith(server, UNAVAILABLE)).toHaveLength(1);
    await proxy.setMode('pass');
    await expectCountedAgain(server.url);
    // Two failures were counted, before the outage and after it; nothing the outage refused took a point.
    expect(await allowedBefore429([server.url], failedLogin, 401)).toBe(LIMIT - 2);
  },
);

test('REDIS_URL naming a closed port: the server starts, says so, and refuses credential checks and writes rather than count them alone', async () => {
  store = await createTestStore('sqlite');
  server = await startServerProcess(store, { ...LIMIT_ENV, REDIS_URL: 'redis://127.0.0.1:1', RATE_LIMIT_KEY_PREFIX: prefix });
  expect(server.output()).toContain('Redis (REDIS_URL) is not reachable yet');
  await expectRefusedUncounted(server.url, 2000);
  expect(linesWith(server, UNAVAILABLE)).toHaveLength(1);
});

(postgresAvailable ? test : test.skip)(
  'PostgreSQL blackholed: credential checks refused (503) within a bound, none checked; counted again once it answers',
  async () => {
    store = await createTestStore('postgres');
    const url = new URL(store.url);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    server = await startServerProcess(store, { ...LIMIT_ENV, DATABASE_URL: proxy.via(store.url) });
    await proxy.setMode('blackhole');
    const checks = await counterValue(server.url, 'auth_failures_total');
    const guesses = [await guess(server.url), await guess(server.url), await guess(server.url)];
    expect(guesses.map(({ status, retryAfter }) => ({ status, retryAfter }))).toEqual(guesses.map(() => ({ status: 503, retryAfter: '1' })));
    expect(Math.max(...guesses.map((answer) => answer.ms))).toBeLessThan(2000);
    expect(await counterValue(server.url, 'auth_failures_total')).toBe(checks);
    expect((await asked(server.url, '/protected-resource')).status).toBe(401);
    expect(JSON.parse(linesWith(server, UNAVAILABLE)[0]!)).toMatchObject({ level: 40, store: 'database' });
    expect(linesWith(server, UNAVAILABLE)).toHaveLength(1);
    await proxy.setMode('pass');
    await expectCountedAgain(server.url);
  },
);

(postgresAvailable ? test : test.skip)(
  'rate_limits locked by another session: a logged-in client is still let in; guesses and writes are refused (503), and take no point once the lock goes',
  async () => {
    store = await createTestStore('postgres');
    // A read of the counts must not time out on a busy machine (300 ms was seen to pass): 2 s.
    server = await startServerProcess(store, { ...LIMIT_ENV, RATE_LIMIT_STORE_TIMEOUT_MS: '2000' });
    expect(await login(server.url)).toBe(200);
    const locker = new pg.Client({ connectionString: store.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      // Reads of the counts go on; every write of them waits for the lock.
      await locker.query('LOCK TABLE rate_limits IN EXCLUSIVE MODE');
      // The credential it was let in with, from a client without failures, needs neither a point nor a forgiveness.
      for (let i = 0; i < 3; i++) expect(await login(server.url)).toBe(200);
      await expectRefusedUncounted(server.url, 8000);
      expect(linesWith(server, UNAVAILABLE)).toHaveLength(1);
      // The refused statements are cancelled by the store itself (statement_timeout), not left waiting to take
      // their points when the lock goes.
      const waiting = `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and application_name = 'user-records'`;
      expect(await poll(async () => (await postgresQuery<{ n: number }>(waiting))[0]!.n === 0, 10_000)).toBe(true);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    expect(await allowedBefore429([server.url], failedLogin, 401)).toBe(LIMIT);
  },
);
