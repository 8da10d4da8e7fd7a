import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import SqliteDatabase from 'better-sqlite3';
import { buildUserInput } from '../support/builders.js';
import { serverOnNewSqliteStore, startServerProcess, type ServerProcess } from '../support/server-process.js';
import { createTestStore, postgresQuery, postgresSuperuserAvailable, type TestStore } from '../support/test-store.js';

// Backups taken while the service writes, and restored: every write acknowledged before the backup began is in
// the restored store. SQLite with npm run backup / npm run restore; PostgreSQL with pg_dump / pg_restore.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

async function command(file: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(file, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr };
  }
}

/** Creates users through the server, one after another, until stopped; knows which were acknowledged, and when. */
function steadyWrites(server: ServerProcess) {
  const acknowledged: number[] = [];
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      const response = await fetch(`${server.url}/users`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(buildUserInput()),
      });
      const body = (await response.json()) as { id: number };
      if (response.status === 201) acknowledged.push(body.id);
    }
  })();
  /** Resolves once more than `count` creates have been acknowledged (a wait for a condition, not a time). */
  const atLeast = async (count: number) => {
    while (acknowledged.length <= count) await new Promise((resolve) => setTimeout(resolve, 10));
  };
  return {
    acknowledged,
    atLeast,
    stop: async () => {
      stopped = true;
      return await done;
    },
  };
}

describe('SQLite: npm run backup while the service writes, npm run restore', () => {
  const each = serverOnNewSqliteStore();

  test('the backup holds every write acknowledged before it began, and a store restored from it serves them', async () => {
    const { store } = each;
    const writes = steadyWrites(await each.start());
    await writes.atLeast(20);
    const before = [...writes.acknowledged];
    const backup = join(dirname(store.sqliteFile!), 'backup.sqlite');
    const taken = await command('npm', ['run', '--silent', 'backup', '--', backup], { DATABASE_URL: store.url });
    await writes.atLeast(before.length);
    await writes.stop();
    expect(taken).toMatchObject({ code: 0, stderr: '' });
    const summary = JSON.parse(taken.stdout) as { backup: string; users: number; migrations: number };
    expect(summary).toMatchObject({ backup, store: store.sqliteFile });
    expect(before.length).toBeGreaterThan(20);
    // Writes went on during the backup: the store holds more than the backup.
    expect(writes.acknowledged.length).toBeGreaterThan(before.length);
    const copy = new SqliteDatabase(backup, { readonly: true });
    const inBackup = new Set(copy.prepare('select id from users').pluck().all() as number[]);
    copy.close();
    expect(before.filter((id) => !inBackup.has(id))).toEqual([]);
    expect(summary.users).toBe(inBackup.size);

    // Restore into a new store, with the service stopped, and serve from it.
    await each.stop();
    const restoredFile = join(dirname(store.sqliteFile!), 'restored.sqlite');
    const restored = await command('npm', ['run', '--silent', 'restore', '--', backup], { DATABASE_URL: `sqlite:${restoredFile}` });
    expect(restored).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(restored.stdout)).toMatchObject({ restored: backup, users: summary.users });
    const server = await each.start({}, { ...store, url: `sqlite:${restoredFile}` });
    for (const id of before) expect((await fetch(`${server.url}/users/${id}`)).status).toBe(200);
  }, 60_000);

  test.each([
    [
      'an existing file',
      async (dir: string) => ({ args: ['backup', join(dir, 'taken.sqlite')], prepare: () => writeFileSync(join(dir, 'taken.sqlite'), 'x') }),
      /^Could not back up: .*taken\.sqlite exists: name a new file \(a backup never overwrites one\)$/,
    ],
    ['no file named', async () => ({ args: ['backup'], prepare: () => undefined }), /^Could not back up: name the backup file: npm run backup -- <file>$/],
    [
      'a file that is not a store',
      async (dir: string) => ({ args: ['restore', join(dir, 'notes.txt')], prepare: () => writeFileSync(join(dir, 'notes.txt'), 'not a database') }),
      /^Could not restore: .*notes\.txt (cannot be read as a store|fails SQLite's integrity check|cannot be opened).*$/,
    ],
  ])(
    'refuses %s in one line, and exits 1',
    async (_name, setup, line) => {
      const { store } = each;
      const dir = dirname(store.sqliteFile!);
      const { args, prepare } = await setup(dir);
      prepare();
      const [tool, ...rest] = args;
      const result = await command('npm', ['run', '--silent', tool!, ...(rest.length ? ['--', ...rest] : [])], { DATABASE_URL: store.url });
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toMatch(line);
    },
    30_000,
  );
});

(postgresSuperuserAvailable ? describe : describe.skip)('PostgreSQL: pg_dump while the service writes, pg_restore', () => {
  let store: TestStore;
  let server: ServerProcess | undefined;
  const database = `user_records_restored_${randomBytes(4).toString('hex')}`;
  const dump = join(tmpdir(), `${database}.dump`);
  beforeEach(async () => {
    store = await createTestStore('postgres');
  });
  afterEach(async () => {
    await server?.stop();
    await store.drop();
    await postgresQuery(`drop database if exists ${database} with (force)`);
    rmSync(dump, { force: true });
  });

  test('the dump holds every write acknowledged before it began, and a database restored from it serves them', async () => {
    const schema = new URL(store.url).searchParams.get('options')!.replace('-c search_path=', '');
    const upstream = new URL(process.env.TEST_POSTGRES_URL!);
    server = await startServerProcess(store);
    const writes = steadyWrites(server);
    await writes.atLeast(20);
    const before = [...writes.acknowledged];
    const dumped = await command('pg_dump', ['--format=custom', `--schema=${schema}`, `--file=${dump}`, upstream.toString()]);
    await writes.stop();
    expect(dumped).toMatchObject({ code: 0, stderr: '' });
    await server.stop();
    server = undefined;
    await postgresQuery(`create database ${database}`);
    const target = new URL(upstream);
    target.pathname = `/${database}`;
    // The substring index's extension lives in another schema, outside a dump of the service's own.
    await postgresQuery('create extension if not exists pg_trgm schema public', [], target.toString());
    const restored = await command('pg_restore', ['--no-owner', `--dbname=${target.toString()}`, dump]);
    expect(restored).toMatchObject({ code: 0, stderr: '' });
    target.searchParams.set('options', `-c search_path=${schema}`);
    server = await startServerProcess({ ...store, url: target.toString() });
    for (const id of before) expect((await fetch(`${server.url}/users/${id}`)).status).toBe(200);
    expect(before.length).toBeGreaterThan(20);
  }, 60_000);
});
