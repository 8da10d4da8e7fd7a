import { buildUserInput } from '../support/builders.js';
import { STALL_BOUND_MS, startProbe } from '../support/liveness-probe.js';
import { serverOnNewSqliteStore } from '../support/server-process.js';
import { until } from '../support/raw-connections.js';
import { slowSyncs, straceAvailable, syncHeld } from '../support/slow-disk.js';
import { OUTCOME_UNKNOWN, storedEmails } from '../support/write-audit.js';

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
      // Each write is made (201), refused (503: not begun within the statement timeout, never begun later), or
      // answered as of an unknown outcome (504: begun, its commit not confirmed within twice that); none hangs.
      expect(answered.filter(({ status }) => status !== 201 && status !== 503 && status !== 504)).toEqual([]);
      expect(answered.filter(({ status }) => status === 201).length).toBeGreaterThan(0);
      const refused = answered.filter(({ status }) => status === 503);
      for (const { type } of refused) expect(type).toMatch(/store-unavailable$/);
      const unknown = answered.filter(({ status }) => status === 504);
      for (const { type } of unknown) expect(type).toMatch(/write-outcome-unknown$/);
      // The operator sees each of them: one line with the store's code.
      const lines = (msg: string) =>
        server
          .output()
          .split('\n')
          .filter((line) => line.includes(`"msg":"${msg}"`));
      // Workers write their logs as they go: the last lines may reach the output just after the last answer.
      const unknownLine = 'store did not confirm a write in time; its outcome is unknown to the client';
      await until(() => lines('store unavailable').length >= refused.length && lines(unknownLine).length >= unknown.length, 5000);
      expect(lines('store unavailable').length).toBe(refused.length);
      for (const line of lines('store unavailable')) expect(line).toMatch(/"code":"WRITE_NOT_BEGUN"/);
      expect(lines(unknownLine).length).toBe(unknown.length);
      expect(Math.max(...answered.map(({ ms }) => ms))).toBeLessThan(2 * STATEMENT_TIMEOUT_MS + STALL_BOUND_MS);
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
      // The write is answered within its time (the writer does not answer: its outcome is unknown).
      expect(await write).toMatchObject({ status: 504, type: OUTCOME_UNKNOWN });
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
  'WORKERS=%s: writes that waited behind a hung sync for longer than the statement timeout are answered as unknown, and refused by the writer, never made',
  async (workers) => {
    const running = await each.start({ WORKERS: workers, DATABASE_STATEMENT_TIMEOUT_MS: '1000', LOG_LEVEL: 'info' });
    await warmWriter(running.url);
    const disk = await slowSyncs(running.pid, 120_000);
    const late = Array.from({ length: 5 }, () => buildUserInput());
    const firstInput = buildUserInput();
    const first = create(running.url, firstInput);
    try {
      await until(() => syncHeld(running.pid), 10_000);
      expect(syncHeld(running.pid)).toBe(true);
      // These wait for the writer, whose thread is held in the first write's sync: it cannot tell their askers
      // whether it began them, and they answer that the outcome is unknown.
      const answers = await Promise.all(late.map((input) => create(running.url, input)));
      expect(answers.map(({ status, type }) => ({ status, type }))).toEqual(Array(5).fill({ status: 504, type: OUTCOME_UNKNOWN }));
    } finally {
      await disk.lift();
    }
    // The first write's commit was under way: it is made, and its asker was told its outcome was unknown.
    expect(await first).toMatchObject({ status: 504, type: OUTCOME_UNKNOWN });
    // Written after the late ones reached the writer, in order: once it is answered, they were dealt with.
    expect((await create(running.url)).status).toBe(201);
    const stored = await storedEmails(each.store);
    expect(stored.has(firstInput.email)).toBe(true);
    expect(late.filter(({ email }) => stored.has(email))).toEqual([]);
    // The operator learns what became of them: the line reaches the server's output in its own time (a pipe
    // read apart from the answers), so it is waited for.
    const refused = () =>
      running
        .output()
        .split('\n')
        .filter((line) => line.includes('"msg":"refused writes the store writer could not begin within their statement timeout; none of them was made"'))
        .reduce((sum, line) => sum + (JSON.parse(line) as { writes: number }).writes, 0);
    await until(() => refused() >= 5, 10_000);
    expect(refused()).toBe(5);
  },
  60_000,
);
