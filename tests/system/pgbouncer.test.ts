import pg from 'pg';
import { buildUserInput } from '../support/builders.js';
import { databaseBehind, pgbouncerAvailable, startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { runServerToExit, startServerProcess, type ServerProcess } from '../support/server-process.js';
import { postgresQuery, postgresSuperuserAvailable, type TestStore } from '../support/test-store.js';

// The service behind a real PgBouncer in transaction mode, with two server connections shared by every
// client, as deployments with many instances run it. Each test has a database of its own (databaseBehind).

const describeBehindPgBouncer = postgresSuperuserAvailable && pgbouncerAvailable() ? describe : describe.skip;

/** The test server's URL, for one database of it. */
const direct = (database: string) => {
  const url = new URL(process.env.TEST_POSTGRES_URL!);
  url.pathname = `/${database}`;
  return url.toString();
};

const post = (server: ServerProcess, body: unknown) =>
  fetch(`${server.url}/users`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

describeBehindPgBouncer('behind PgBouncer in transaction mode', () => {
  let bouncer: PgBouncer;
  let store: TestStore & { readonly database: string };
  const servers: ServerProcess[] = [];
  /** Starts `count` instances at once; every one that started is stopped after the test, even when another failed. */
  const start = async (count: number, env: Record<string, string> = {}) => {
    const started = await Promise.allSettled(
      Array.from({ length: count }, () => startServerProcess(store, { DATABASE_POOL_MODE: 'transaction', LOG_LEVEL: 'info', ...env })),
    );
    for (const outcome of started) if (outcome.status === 'fulfilled') servers.push(outcome.value);
    for (const outcome of started) if (outcome.status === 'rejected') throw outcome.reason;
    return started.map((outcome) => (outcome as PromiseFulfilledResult<ServerProcess>).value);
  };
  beforeEach(async () => {
    bouncer = await startPgBouncer({ poolMode: 'transaction', poolSize: 2 });
    store = await databaseBehind(bouncer);
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.stop()));
    await bouncer.stop();
    await store.drop();
  });

  test('without DATABASE_POOL_MODE=transaction, the start fails at once with one line naming the setting', async () => {
    const { code, output } = await runServerToExit(store, { LOG_LEVEL: 'info' }, 20_000);
    expect(code).toBe(1);
    expect(output).toContain(
      'Could not start: the database refused the startup parameter statement_timeout, as a pooler in transaction mode (PgBouncer) does. Set DATABASE_POOL_MODE=transaction',
    );
    expect(output).not.toContain('trying again');
  }, 30_000);

  test('with DATABASE_POOL_MODE=transaction and ?options= in DATABASE_URL, the one line names options, not the mode', async () => {
    const url = new URL(store.url);
    url.searchParams.set('options', '-c search_path=public');
    const { code, output } = await runServerToExit({ ...store, url: url.toString() }, { LOG_LEVEL: 'info', DATABASE_POOL_MODE: 'transaction' }, 20_000);
    expect(code).toBe(1);
    expect(output).toContain(
      'Could not start: the database refused the startup parameter options, as a pooler in transaction mode (PgBouncer) does. DATABASE_URL sends it (?options=): remove it, and give the role its search_path instead (ALTER ROLE … SET search_path = …).',
    );
    expect(output).not.toContain('Set DATABASE_POOL_MODE');
  }, 30_000);

  test('two instances migrate at once through it, serve, and leave no lock and no setting behind', async () => {
    const [first, second] = await start(2);
    const created = await post(first!, buildUserInput());
    expect(created.status).toBe(201);
    const user = (await created.json()) as { id: number };
    expect(await (await fetch(`${second!.url}/users/${user.id}`)).json()).toEqual(user);
    // Kysely's migration lock is a session's advisory lock: taken and released inside one transaction.
    expect(await postgresQuery(`select objid from pg_locks where locktype = 'advisory'`, [], direct(store.database))).toEqual([]);
    // SET LOCAL ends with its transaction: a client that gets the same server connections sees the defaults.
    const client = new pg.Client({ connectionString: bouncer.url(store.database) });
    await client.connect();
    try {
      for (let i = 0; i < 4; i++) expect((await client.query('show statement_timeout')).rows[0]).toEqual({ statement_timeout: '0' });
    } finally {
      await client.end();
    }
  }, 60_000);

  test('a statement that waits longer than DATABASE_STATEMENT_TIMEOUT_MS is cancelled by the server: a 503, and no backend left waiting', async () => {
    const [server] = await start(1, { DATABASE_STATEMENT_TIMEOUT_MS: '500' });
    const locker = new pg.Client({ connectionString: direct(store.database) });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table users in access exclusive mode');
      const response = await fetch(`${server!.url}/users/1`);
      expect(response.status).toBe(503);
      // The server cancelled the statement (57014): the service's backend no longer waits for the lock. A
      // timeout only on the client's side would leave it waiting until the lock is released.
      const waiting = await locker.query(`select pid from pg_stat_activity where datname = $1 and wait_event_type = 'Lock'`, [store.database]);
      expect(waiting.rows).toEqual([]);
      // The warning is written as the answer goes out: wait for the process's output to carry it.
      for (let tries = 0; tries < 100 && !server!.output().includes('canceling statement due to statement timeout'); tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(server!.output()).toContain('canceling statement due to statement timeout');
    } finally {
      await locker.query('rollback').catch(() => undefined);
      await locker.end();
    }
  }, 60_000);

  test('the write limit is shared by two instances through it, with no fallback to counting per process', async () => {
    const limits = { RATE_LIMIT_WRITES_PER_MINUTE: '4' };
    const [first, second] = await start(2, limits);
    const statuses: number[] = [];
    for (const server of [first!, second!, first!, second!, first!, second!]) statuses.push((await post(server, buildUserInput())).status);
    expect(statuses).toEqual([201, 201, 201, 201, 429, 429]);
    for (const server of [first!, second!]) {
      expect(server.output()).not.toContain('shared rate-limit store unavailable');
      expect(server.output()).not.toContain('prepared statement');
    }
  }, 60_000);
});
