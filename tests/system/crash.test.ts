import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { buildUserInput } from '../support/builders.js';
import { processTree, startServerProcess } from '../support/server-process.js';
import { createTestStore, describeEachDialect, type TestStore } from '../support/test-store.js';

// SIGKILL in the middle of concurrent creates: every create that got its 201 must be there afterwards,
// and the store must be intact.

/**
 * SQLite's own integrity check; on PostgreSQL, amcheck's verification of every B-tree index of the store's
 * tables (PostgreSQL 15's amcheck verifies no other kind; the substring index is a GIN index).
 */
async function expectIntact(store: TestStore): Promise<void> {
  if (store.sqliteFile) {
    const file = new SqliteDatabase(store.sqliteFile, { readonly: true });
    try {
      expect(file.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      file.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: store.url });
  await client.connect();
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS amcheck');
    const { rows } = await client.query(
      `SELECT c.relname AS index FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
       WHERE c.relnamespace = current_schema()::regnamespace AND a.amname = 'btree'`,
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const { index } of rows) await client.query('SELECT bt_index_check($1::regclass, true)', [index]);
  } finally {
    await client.end();
  }
}

/** SIGKILL to a process and every process it started, at once: a crash of the whole server, workers included. */
function killTree(pid: number): void {
  for (const each of processTree(pid)) process.kill(each, 'SIGKILL');
}

describeEachDialect((dialect) => {
  // With WORKERS on SQLite every write goes through the primary, the store's one writer (db/sqlite/store-writer.ts).
  test.each([1, 4])(
    'every acknowledged create survives a SIGKILL (WORKERS=%i), and the store is intact',
    async (workers) => {
      const store = await createTestStore(dialect);
      const acknowledged = new Map<number, string>();
      try {
        const server = await startServerProcess(store, { SEED_DEMO_DATA: 'false', WORKERS: String(workers) });
        let killed = false;
        const writer = async () => {
          while (!killed) {
            const input = buildUserInput();
            try {
              const response = await fetch(`${server.url}/users`, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify(input),
              });
              if (response.status === 201) acknowledged.set(((await response.json()) as { id: number }).id, input.email);
            } catch {
              // The connection died with the server: this create was never acknowledged.
            }
          }
        };
        const writers = Array.from({ length: 16 }, writer);
        // Kill once enough creates were acknowledged to make the check mean something, with the writers still
        // going: a wait for that condition, not a fixed time (a busy machine acknowledged 16 in 750 ms).
        const deadline = Date.now() + 30_000;
        while (acknowledged.size <= 40 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
        killed = true;
        killTree(server.pid);
        expect(await server.exited).toBe('SIGKILL');
        await Promise.all(writers);
        expect(acknowledged.size).toBeGreaterThan(40);

        const restarted = await startServerProcess(store, { SEED_DEMO_DATA: 'false' });
        try {
          const listed = (await (await fetch(`${restarted.url}/users`)).json()) as { id: number; email: string }[];
          const stored = new Map(listed.map((user) => [user.id, user.email]));
          for (const [id, email] of acknowledged) expect(stored.get(id)).toBe(email);
          expect(stored.size).toBe(listed.length);
          // The store still takes writes after the crash.
          const after = await fetch(`${restarted.url}/users`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(buildUserInput()),
          });
          expect(after.status).toBe(201);
        } finally {
          expect(await restarted.stop()).toBe(0);
        }
        await expectIntact(store);
      } finally {
        await store.drop();
      }
    },
    60_000,
  );
});
