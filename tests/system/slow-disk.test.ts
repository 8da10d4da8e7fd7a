import SqliteDatabase from 'better-sqlite3';
import { buildUserInput } from '../support/builders.js';
import { STALL_BOUND_MS, startProbe } from '../support/liveness-probe.js';
import { serverOnNewSqliteStore } from '../support/server-process.js';
import { until } from '../support/raw-connections.js';
import { slowSyncs, straceAvailable, syncHeld } from '../support/slow-disk.js';

// SQLite commits inside a synchronous call, which waits for the disk's sync: on a disk that stalls, a commit
// made on the event loop held every request of the process (reads, /healthz) for as long as the sync took.
// The store's writer is a thread (of the process alone, or of the cluster primary): only writes wait.

const SYNC_DELAY_MS = 2500;
// The default: a write waits at most for two syncs (the commit before its own, and its own), 5 s, within it.
const STATEMENT_TIMEOUT_MS = 5000;

const runs = straceAvailable() ? test.each : test.skip.each;

const each = serverOnNewSqliteStore();

const create = async (url: string, input = buildUserInput()) => {
  const started = performance.now();
  const response = await fetch(`${url}/users`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(input) });
  const { type } = (await response.json()) as { type?: string };
  return { status: response.status, type, ms: performance.now() - started };
};

/**
 * A first write made before the disk is slowed. The writer's first write (its statements prepared, its code
 * compiled) took more than the tests' 1 s statement timeout on a loaded machine: refused as late, it never
 * reached a sync, and the test waited for one in vain.
 */
async function warmWriter(url: string): Promise<void> {
  expect((await create(url)).status).toBe(201);
}

/** The addresses of the users the store holds, read from its file. */
function storedEmails(file: string): Set<string> {
  const reader = new SqliteDatabase(file, { readonly: true });
  try {
    return new Set((reader.prepare('SELECT email FROM users').all() as Array<{ email: string }>).map((row) => row.email));
  } finally {
    reader.close();
  }
}

runs([['1'], ['2']])(
  'WORKERS=%s: while every sync of the disk takes 2.5 s, /healthz and reads are answered; writes wait, or fail within their timeout, and succeed once the disk is fast again',
  async (workers) => {
    const server = await each.start({ WORKERS: workers, DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS), LOG_LEVEL: 'info' });
    const { url } = server;
    const disk = await slowSyncs(server.pid, SYNC_DELAY_MS);
    try {
      const health = startProbe(`${url}/healthz`);
      const reads = startProbe(`${url}/users/1`);
      // Writes keep arriving for 6 s: each commit waits for a slow sync, and those behind it wait for the next.
      const writes: Array<ReturnType<typeof create>> = [];
      for (const started = performance.now(); performance.now() - started < 6000; ) {
        writes.push(create(url));
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      const answered = await Promise.all(writes);
      for (const probe of [await health.stop(), await reads.stop()]) {
        expect(probe.statuses.length).toBeGreaterThan(10);
        expect(probe.statuses.every((status) => status === 200)).toBe(true);
        // Before the single process had a writer thread: 2.5 s and more, a sync's delay each time a commit ran.
        expect(probe.slowestMs).toBeLessThan(STALL_BOUND_MS);
      }
      // Each write is made (201) or refused as an outage (503: it was not begun within the statement timeout,
      // or the writer did not answer within it and a second more); none hangs.
      expect(answered.filter(({ status }) => status !== 201 && status !== 503)).toEqual([]);
      expect(answered.filter(({ status }) => status === 201).length).toBeGreaterThan(0);
      const refused = answered.filter(({ status }) => status === 503);
      for (const { type } of refused) expect(type).toMatch(/store-unavailable$/);
      // The operator sees each refusal: one line with the store's code.
      const outages = server.output().split('\n').filter((line) => line.includes('"msg":"store unavailable"'));
      expect(outages.length).toBe(refused.length);
      for (const line of outages) expect(line).toMatch(/"code":"(WRITE_LOCK_TIMEOUT|WRITER_BACKLOG|WRITER_TIMEOUT)"/);
      expect(Math.max(...answered.map(({ ms }) => ms))).toBeLessThan(STATEMENT_TIMEOUT_MS + 1000 + SYNC_DELAY_MS + STALL_BOUND_MS);
    } finally {
      await disk.lift();
    }
    expect((await create(url)).status).toBe(201);
  },
  60_000,
);

runs([['1']])(
  'WORKERS=%s: a shutdown while a sync hangs answers the write waiting for it, says why it waits, and ends once the disk answers',
  async (workers) => {
    const running = await each.start({ WORKERS: workers, DATABASE_STATEMENT_TIMEOUT_MS: '1000', LOG_LEVEL: 'info' });
    await warmWriter(running.url);
    const disk = await slowSyncs(running.pid, 120_000);
    try {
      const write = create(running.url);
      // The write's commit is in its sync when the signal comes.
      await until(() => syncHeld(running.pid), 10_000);
      expect(syncHeld(running.pid)).toBe(true);
      process.kill(running.pid, 'SIGTERM');
      // The write is answered within its timeout (the writer does not answer: its outcome is unknown).
      expect(await write).toMatchObject({ status: 503 });
      const stuck = () => running.output().includes('"msg":"the store writer thread did not close its store in time; terminating it"');
      await until(stuck, 20_000);
      expect(stuck()).toBe(true);
    } finally {
      await disk.lift();
    }
    expect(await running.exited).toBe(0);
  },
  60_000,
);

runs([['1'], ['2']])(
  'WORKERS=%s: writes that waited behind a hung sync for longer than the statement timeout are refused when they reach the writer, never made',
  async (workers) => {
    const running = await each.start({ WORKERS: workers, DATABASE_STATEMENT_TIMEOUT_MS: '1000', LOG_LEVEL: 'info' });
    await warmWriter(running.url);
    const disk = await slowSyncs(running.pid, 120_000);
    const late = Array.from({ length: 5 }, () => buildUserInput());
    const first = create(running.url);
    try {
      await until(() => syncHeld(running.pid), 10_000);
      expect(syncHeld(running.pid)).toBe(true);
      // These wait for the writer, whose thread is held in the first write's sync: their askers give up.
      expect((await Promise.all(late.map((input) => create(running.url, input)))).map(({ status }) => status)).toEqual(Array(5).fill(503));
    } finally {
      await disk.lift();
    }
    // The first write's commit was under way: it is made (its asker was told 503 WRITER_TIMEOUT: unknown).
    expect(await first).toMatchObject({ status: 503 });
    // Written after the late ones reached the writer, in order: once it is answered, they were dealt with.
    expect((await create(running.url)).status).toBe(201);
    const stored = storedEmails(each.store.sqliteFile!);
    expect(late.filter(({ email }) => stored.has(email))).toEqual([]);
    // The operator learns what became of them: the line reaches the server's output in its own time (a pipe
    // read apart from the answers), so it is waited for.
    const refused = () =>
      running
        .output()
        .split('\n')
        .filter((line) => line.includes('"msg":"refused writes that reached the store writer after their statement timeout; none of them was made"'))
        .reduce((sum, line) => sum + (JSON.parse(line) as { writes: number }).writes, 0);
    await until(() => refused() >= 5, 10_000);
    expect(refused()).toBe(5);
  },
  60_000,
);
