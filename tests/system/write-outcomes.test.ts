import pg from 'pg';
import { serverOnNewSqliteStore, startServerProcess, type ServerProcess } from '../support/server-process.js';
import { slowSyncs, stopAtNextSync, straceAvailable } from '../support/slow-disk.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { createTestStore, postgresAvailable, type TestStore } from '../support/test-store.js';
import { audit, createOnce, flood, steadyFlood, storedEmails, summary, type CreateAnswer, type WriteAudit } from '../support/write-audit.js';

// A write answered with anything but success is never made, and one answered 201 is on disk: a client that
// retries after a 503 makes no duplicate. The one exception is 504 write-outcome-unknown, a write that had
// begun when its request's time ran out, whose outcome the client learns with its Idempotency-Key. Each test
// floods the service with creates while a real fault holds its store (a disk whose syncs strace delays, a
// process stopped by SIGSTOP, a PostgreSQL lock held by another session, answers lost on the way back), then
// reads the store itself.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const describeStrace = straceAvailable() ? describe : describe.skip;
const describePostgres = postgresAvailable ? describe : describe.skip;

/**
 * Once the fault is over and every create was answered: a statement timeout (after which the writer begins
 * nothing that was asked during the fault) and a second more, then a create that must succeed.
 */
async function settled(url: string, statementMs: number): Promise<void> {
  await sleep(statementMs + 1000);
  expect((await createOnce(url)).status).toBe(201);
}

/** The flood's outcomes against the store: none refused and stored, none acknowledged and lost, none unanswered. */
async function expectHonest(name: string, answers: readonly CreateAnswer[], store: TestStore): Promise<WriteAudit> {
  const result = audit(answers, await storedEmails(store));
  console.log(summary(name, result));
  expect(result.refusedButStored).toEqual([]);
  expect(result.acknowledgedButLost).toEqual([]);
  expect(result.unanswered).toEqual([]);
  return result;
}

describeStrace('SQLite: a write that waited behind slow syncs', () => {
  const each = serverOnNewSqliteStore();
  const STATEMENT_MS = 2000;
  // Shorter than the statement timeout: the flood reaches the writer in time, and waits there for a commit.
  const SYNC_DELAY_MS = 1500;

  test.each([['1'], ['2']])(
    'WORKERS=%s: every sync 1.5 s late, one create and then 600 at once: each 201 is stored, no refused create is',
    async (workers) => {
      const server = await each.start({ WORKERS: workers, DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_MS), LOG_LEVEL: 'info' });
      expect((await createOnce(server.url)).status).toBe(201);
      const disk = await slowSyncs(server.pid, SYNC_DELAY_MS);
      let answers: CreateAnswer[];
      try {
        const first = createOnce(server.url);
        await sleep(500);
        answers = [await first, ...(await flood(server.url, 600))];
      } finally {
        await disk.lift();
      }
      await settled(server.url, STATEMENT_MS);
      const result = await expectHonest(`WORKERS=${workers}, syncs ${SYNC_DELAY_MS} ms late`, answers, each.store);
      // The fault was felt: a commit carries at most 256 creates, and the next waits for a late sync.
      expect(result.refused + result.unknown).toBeGreaterThan(0);
      expect(result.made).toBeGreaterThan(0);
    },
    90_000,
  );
});

describeStrace('SQLite: a writer stopped in the middle of a commit', () => {
  const each = serverOnNewSqliteStore();
  const STATEMENT_MS = 1000;

  test.each([['1'], ['2']])(
    'WORKERS=%s: the process that writes stopped (SIGSTOP) in a commit for 3 s during a flood of 600 creates: each 201 is stored, no refused create is',
    async (workers) => {
      const server = await each.start({ WORKERS: workers, DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_MS), LOG_LEVEL: 'info' });
      expect((await createOnce(server.url)).status).toBe(201);
      // With WORKERS the primary writes for every worker (its writer thread); alone, the process writes itself.
      const stopping = stopAtNextSync(server.pid, 10_000);
      const answers = flood(server.url, 600);
      const stopped = await stopping;
      await sleep(3000);
      stopped.resume();
      const answered = await answers;
      await settled(server.url, STATEMENT_MS);
      const result = await expectHonest(`WORKERS=${workers}, stopped 3 s in a commit`, answered, each.store);
      expect(result.refused + result.unknown).toBeGreaterThan(0);
    },
    90_000,
  );
});

describePostgres('PostgreSQL: writes held by a stalled connection', () => {
  const STATEMENT_MS = 1000;
  let store: TestStore;
  let server: ServerProcess | undefined;

  beforeEach(async () => {
    store = await createTestStore('postgres');
  });
  afterEach(async () => {
    await server?.stop('SIGKILL');
    server = undefined;
    await store.drop();
  });

  const start = async (url = store.url) => {
    server = await startServerProcess(store, {
      DATABASE_URL: url,
      DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_MS),
      DATABASE_CONNECT_TIMEOUT_MS: String(STATEMENT_MS),
      LOG_LEVEL: 'info',
    });
    expect((await createOnce(server.url)).status).toBe(201);
    return server;
  };

  test('a lock on the users table held by another session for 2.5 s during a flood of 300 creates: each 201 is stored, no refused create is', async () => {
    const { url } = await start();
    const holder = new pg.Client({ connectionString: store.url });
    await holder.connect();
    let answers: CreateAnswer[];
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
      const release = sleep(2500).then(() => holder.query('COMMIT'));
      answers = await flood(url, 300);
      await release;
    } finally {
      await holder.end();
    }
    await settled(url, STATEMENT_MS);
    const result = await expectHonest('PostgreSQL, a lock held 2.5 s', answers, store);
    expect(result.refused + result.unknown).toBeGreaterThan(0);
  }, 90_000);

  test('answers lost on the way back for 3 s during a flood of 900 creates: each 201 is stored, no refused create is', async () => {
    const database = new URL(store.url);
    const proxy = await startTcpProxy({ host: database.hostname, port: Number(database.port || 5432) });
    try {
      const { url } = await start(proxy.via(store.url));
      const fault = (async () => {
        await sleep(500);
        await proxy.setMode('answers-lost');
        await sleep(3000);
        await proxy.setMode('pass');
        await sleep(1000);
      })();
      const answers = steadyFlood(url, 10, 50, fault);
      const answered = await answers;
      expect(answered.length).toBeGreaterThanOrEqual(300);
      await settled(url, STATEMENT_MS);
      const result = await expectHonest('PostgreSQL, answers lost 3 s', answered, store);
      expect(result.refused + result.unknown).toBeGreaterThan(0);
    } finally {
      await proxy.close();
    }
  }, 90_000);
});
