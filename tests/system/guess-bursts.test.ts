import { counterValue } from '../support/fault-load.js';
import { failedLogin, firstLogin, LIMIT } from '../support/limit-budget.js';
import { databaseBehind, pgbouncerAvailable, startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { createTestStore, postgresAvailable, postgresSuperuserAvailable, type TestStore } from '../support/test-store.js';

// Bursts of wrong guesses from one address, each on a connection of its own, at two instances that count on
// PostgreSQL: directly and through PgBouncer, with a pool of 2 and of 10 connections. However far a burst
// saturates what the counts go through, at most AUTH_MAX_FAILURES credentials are checked: a count that cannot
// be had in time refuses the check (503), never counts it elsewhere. Nor does a burst from one client keep
// another's login from being counted and checked.

const BURSTS = [300, 500, 1000];

/** A deployment of two instances on one PostgreSQL store, reached directly or through PgBouncer. */
const DEPLOYMENTS = [
  { route: 'directly', pool: 2, pgbouncer: false },
  { route: 'directly', pool: 10, pgbouncer: false },
  { route: 'through PgBouncer', pool: 2, pgbouncer: true },
  { route: 'through PgBouncer', pool: 10, pgbouncer: true },
];

/** Each burst comes from an address of its own, so that every burst meets a budget nobody has touched. */
let bursts = 0;
const nextAddress = () => `127.45.${Math.floor(++bursts / 250)}.${(bursts % 250) + 1}`;

/** The statuses of `count` wrong guesses sent at once from one address to the instances in turn, by status. */
async function burst(urls: readonly string[], count: number): Promise<Record<number, number>> {
  const from = nextAddress();
  const answers = await Promise.all(Array.from({ length: count }, (_, i) => failedLogin(urls[i % urls.length]!, undefined, from)));
  const counts: Record<number, number> = {};
  for (const status of answers) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

/**
 * The real user's login, from an address of its own, sent while a burst is under way by a client that honours
 * `Retry-After` (1 s) on a 503, three tries at most: its last status.
 */
async function loginDuring(url: string): Promise<number> {
  const from = nextAddress();
  await new Promise((resolve) => setTimeout(resolve, 50));
  for (let tried = 1; ; tried++) {
    const status = await firstLogin(url, from);
    if (status !== 503 || tried === 3) return status;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** Credentials the instances checked and found wrong, so far. */
const checked = async (urls: readonly string[]) =>
  (await Promise.all(urls.map((url) => counterValue(url, 'auth_failures_total')))).reduce((sum, n) => sum + n, 0);

const usable = (pgbouncer: boolean) => postgresAvailable && (!pgbouncer || (postgresSuperuserAvailable && pgbouncerAvailable()));

describe.each(DEPLOYMENTS)('two instances counting on PostgreSQL $route, pool of $pool', ({ pool, pgbouncer }) => {
  const ready = usable(pgbouncer);
  let bouncer: PgBouncer | undefined;
  let store: TestStore | undefined;
  let servers: ServerProcess[] = [];
  beforeAll(async () => {
    if (!ready) return;
    bouncer = pgbouncer ? await startPgBouncer() : undefined;
    store = bouncer ? await databaseBehind(bouncer) : await createTestStore('postgres');
    const env = { AUTH_MAX_FAILURES: String(LIMIT), DATABASE_POOL_SIZE: String(pool), ...(bouncer ? { DATABASE_POOL_MODE: 'transaction' } : {}) };
    const started = await Promise.allSettled([startServerProcess(store, env), startServerProcess(store, env)]);
    servers = started.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
    for (const outcome of started) if (outcome.status === 'rejected') throw outcome.reason;
  }, 60_000);
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop('SIGKILL')));
    await store?.drop();
    await bouncer?.stop();
  });

  (ready ? test.each(BURSTS) : test.skip.each(BURSTS))(
    '%i wrong guesses at once from one address: at most the budget checked, the rest refused; another client logs in meanwhile',
    async (count) => {
      const urls = servers.map((server) => server.url);
      const before = await checked(urls);
      const [statuses, login] = await Promise.all([burst(urls, count), loginDuring(urls[0]!)]);
      const failures = (await checked(urls)) - before;
      expect(login).toBe(200);
      // A guess answered 401 is one whose password was checked; each instance counts those it checked.
      expect(statuses[401] ?? 0).toBeLessThanOrEqual(LIMIT);
      expect(failures).toBeLessThanOrEqual(LIMIT);
      // Refused for the budget (429) or because its count could not be had in time (503); nothing else.
      expect(Object.keys(statuses).filter((status) => !['401', '429', '503'].includes(status))).toEqual([]);
    },
    60_000,
  );
});
