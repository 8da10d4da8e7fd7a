import SqliteDatabase from 'better-sqlite3';
import { buildUserInput } from '../support/builders.js';
import { STALL_BOUND_MS, startProbe } from '../support/liveness-probe.js';
import { serverOnNewSqliteStore } from '../support/server-process.js';

// With WORKERS on SQLite, the primary is the store's only writer: workers never wait for SQLite's write lock,
// whose busy wait holds a process's event loop until the lock is free.

const HOLD_MS = 3000;

const each = serverOnNewSqliteStore();

const create = (url: string) =>
  fetch(`${url}/users`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(buildUserInput()) });

test('what one worker writes (a create, a patch), every worker reads at once', async () => {
  const { url } = await each.start({ WORKERS: '3' });
  for (let i = 0; i < 12; i++) {
    const created = await create(url);
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    // New connections: the reads land on other workers than the write did.
    const reads = await Promise.all([1, 2, 3].map(() => fetch(`${url}/users/${id}`, { headers: { connection: 'close' } })));
    expect(reads.map((read) => read.status)).toEqual([200, 200, 200]);
    // Every kind of write goes through the primary: a patch too.
    const patched = await fetch(`${url}/users/${id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ lastName: `Patched${i}` }),
    });
    expect(patched.status).toBe(200);
    const again = await Promise.all(
      [1, 2, 3].map(async () => (await (await fetch(`${url}/users/${id}`, { headers: { connection: 'close' } })).json()) as { lastName: string }),
    );
    expect(again.map((user) => user.lastName)).toEqual(Array(3).fill(`Patched${i}`));
  }
});

test.each([['1'], ['2']])(
  'WORKERS=%s: a write lock held by another process holds no event loop: health checks and reads are answered meanwhile',
  async (workers) => {
    const { url } = await each.start({ WORKERS: workers, DATABASE_STATEMENT_TIMEOUT_MS: '8000' });
    const other = new SqliteDatabase(each.store.sqliteFile!);
    other.exec('BEGIN IMMEDIATE');
    const health = startProbe(`${url}/healthz`);
    const reads = startProbe(`${url}/users/1`);
    const writes = Promise.all(Array.from({ length: 8 }, () => create(url)));
    await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
    other.exec('COMMIT');
    other.close();
    expect((await writes).map((response) => response.status)).toEqual(Array(8).fill(201));
    for (const probe of [await health.stop(), await reads.stop()]) {
      expect(probe.statuses.every((status) => status === 200)).toBe(true);
      // Before, the write waited for the lock inside a synchronous call, /healthz as long as the lock was held
      // (~3 s): in each worker before the primary became the only writer, and with WORKERS=1 until 26eb240.
      expect(probe.slowestMs).toBeLessThan(STALL_BOUND_MS);
    }
  },
  30_000,
);

test.each([['1'], ['2']])(
  'WORKERS=%s: a write answered 503 while the lock is held was not made, and is not made later',
  async (workers) => {
    const { url } = await each.start({ WORKERS: workers, DATABASE_STATEMENT_TIMEOUT_MS: '1000' });
    const other = new SqliteDatabase(each.store.sqliteFile!);
    other.exec('BEGIN IMMEDIATE');
    // Creates keep arriving while the lock is held for longer than a statement may wait, and after.
    const sent: Array<Promise<{ email: string; status: number }>> = [];
    const started = performance.now();
    while (performance.now() - started < 6000) {
      const input = buildUserInput();
      sent.push(
        fetch(`${url}/users`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(input) }).then((r) => ({
          email: input.email,
          status: r.status,
        })),
      );
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
    other.exec('COMMIT');
    other.close();
    const answers = await Promise.all(sent);
    // A moment for any write that was still queued to be committed (as they were before).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const reader = new SqliteDatabase(each.store.sqliteFile!, { readonly: true });
    const stored = new Set((reader.prepare('SELECT email FROM users').all() as Array<{ email: string }>).map((row) => row.email));
    reader.close();
    const refused = answers.filter((answer) => answer.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    expect(answers.filter((answer) => answer.status !== 503 && answer.status !== 201)).toEqual([]);
    expect(refused.filter((answer) => stored.has(answer.email)).length).toBe(0);
    expect(answers.filter((answer) => answer.status === 201 && !stored.has(answer.email)).length).toBe(0);
  },
  30_000,
);
