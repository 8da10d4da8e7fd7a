import { execFile } from 'node:child_process';
import { existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import SqliteDatabase from 'better-sqlite3';
import { buildUserInput } from '../support/builders.js';
import { docBlock } from '../support/doc-blocks.js';
import { straceAvailable } from '../support/slow-disk.js';
import { runServerToExit, serverOnNewSqliteStore, startServerProcess, type ServerProcess } from '../support/server-process.js';
import { createTestStore, postgresQuery, postgresSuperuserAvailable, type TestStore } from '../support/test-store.js';

// Backups taken while the service writes, and restored: every write acknowledged before the backup began is in
// the restored store. SQLite with make backup / make restore; PostgreSQL with pg_dump / pg_restore, each as
// docs/deployment.md writes them.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

async function command(
  file: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; signal?: string; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(file, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, signal, stdout, stderr } = error as { code: number | null; signal?: string; stdout: string; stderr: string };
    return { code, signal, stdout, stderr };
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

describe("SQLite: docs/deployment.md's make backup while the service writes, and its make restore", () => {
  const each = serverOnNewSqliteStore();

  test('the backup holds every write acknowledged before it began, and a store restored from it serves them', async () => {
    const { store } = each;
    const writes = steadyWrites(await each.start());
    await writes.atLeast(20);
    const before = [...writes.acknowledged];
    const backup = join(dirname(store.sqliteFile!), 'backup.sqlite');
    const taken = await command('bash', [
      '-c',
      docBlock('docs/deployment.md', 'sqlite-backup', [
        ['sqlite:./data/users.sqlite', store.url],
        ['backups/users-2026-11-26.sqlite', backup],
      ]),
    ]);
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
    const restored = await command('bash', [
      '-c',
      docBlock('docs/deployment.md', 'sqlite-restore', [
        ['sqlite:./data/users.sqlite', `sqlite:${restoredFile}`],
        ['backups/users-2026-11-26.sqlite', backup],
      ]),
    ]);
    expect(restored).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(restored.stdout)).toMatchObject({ restored: backup, users: summary.users });
    const server = await each.start({}, { ...store, url: `sqlite:${restoredFile}` });
    for (const id of before) expect((await fetch(`${server.url}/users/${id}`)).status).toBe(200);
  }, 60_000);

  /** Creates `count` users through the server, one after another; their ids. */
  const create = async (server: ServerProcess, count: number) => {
    const ids: number[] = [];
    for (let i = 0; i < count; i++) {
      const response = await fetch(`${server.url}/users`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(buildUserInput()),
      });
      expect(response.status).toBe(201);
      ids.push(((await response.json()) as { id: number }).id);
    }
    return ids;
  };
  const backupOf = async (store: TestStore, file: string) => {
    const taken = await command('npm', ['run', '--silent', 'backup', '--', file], { DATABASE_URL: store.url });
    expect(taken).toMatchObject({ code: 0, stderr: '' });
  };
  /** A service on the test's store that created `kept` users, was backed up, then created `lost` more. */
  const backedUp = async (kept: number, lost: number) => {
    const server = await each.start();
    const before = await create(server, kept);
    const backup = join(dirname(each.store.sqliteFile!), 'backup.sqlite');
    await backupOf(each.store, backup);
    return { server, backup, before, after: await create(server, lost) };
  };
  const restore = (store: TestStore, ...args: string[]) => command('npm', ['run', '--silent', 'restore', '--', ...args], { DATABASE_URL: store.url });

  test('a backup goes into a folder it makes, readable by its owner only', async () => {
    const { store } = each;
    await create(await each.start(), 2);
    const backup = join(dirname(store.sqliteFile!), 'new', 'folder', 'users.sqlite');
    await backupOf(store, backup);
    expect(statSync(backup).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(backup)).mode & 0o777).toBe(0o700);
    expect(existsSync(`${backup}.partial`)).toBe(false);
  }, 30_000);

  test('restore refuses a store a running service holds, and the service goes on serving every write it acknowledged', async () => {
    const { store } = each;
    const { server, backup, before, after } = await backedUp(3, 3);
    const refused = await restore(store, backup);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toMatch(
      /^Could not restore: .*users\.sqlite is open in another process \(a running service, a backup or a migration\): stop it first\./,
    );
    expect(existsSync(`${store.sqliteFile}.restoring`)).toBe(false);
    for (const id of [...before, ...after]) expect((await fetch(`${server.url}/users/${id}`)).status).toBe(200);
    expect(await create(server, 1)).toEqual([after.at(-1)! + 1]);
  }, 30_000);

  test('after a restore, ids the store handed out after the backup are never handed out again', async () => {
    const { store } = each;
    const { backup, after: lost } = await backedUp(2, 5);
    await each.stop();
    const restored = await restore(store, backup);
    expect(restored).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(restored.stdout)).toMatchObject({ restored: backup, nextId: lost.at(-1)! + 1 });
    const server = await each.start();
    for (const id of lost) expect((await fetch(`${server.url}/users/${id}`)).status).toBe(404);
    expect(await create(server, 1)).toEqual([lost.at(-1)! + 1]);
  }, 30_000);

  test('a restore into a store that was lost starts ids where --next-id says', async () => {
    const { store } = each;
    await create(await each.start(), 2);
    const backup = join(dirname(store.sqliteFile!), 'backup.sqlite');
    await backupOf(store, backup);
    await each.stop();
    const elsewhere = { ...store, url: `sqlite:${join(dirname(store.sqliteFile!), 'lost', 'users.sqlite')}` };
    const restored = await restore(elsewhere, backup, '--next-id=1000');
    expect(restored).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(restored.stdout)).toMatchObject({ nextId: 1000 });
    expect(await create(await each.start({}, elsewhere), 1)).toEqual([1000]);
  }, 30_000);

  (straceAvailable() ? test : test.skip)(
    'a restore killed half way leaves the store refusing to start, and running it again finishes it',
    async () => {
      const { store } = each;
      const { backup, before: kept, after: lost } = await backedUp(3, 2);
      await each.stop();
      // Killed by strace at its second write of a page into the store: its marker written, its copy half made.
      const killed = await command(
        'strace',
        [
          '-f',
          '-o',
          '/dev/null',
          '-e',
          'trace=pwrite64',
          '-e',
          'inject=pwrite64:signal=SIGKILL:when=2',
          process.execPath,
          'dist/server/tools/backup.js',
          'restore',
          backup,
        ],
        { DATABASE_URL: store.url },
      );
      expect(killed).toMatchObject({ code: null, signal: 'SIGKILL' });
      const marker = `${store.sqliteFile}.restoring`;
      const refused = await runServerToExit(store, {}, 20_000);
      expect(refused.code).toBe(1);
      expect(refused.output).toContain(
        `Could not start: a restore into ${store.sqliteFile} has not finished (${marker} is there). Run the restore again with the same backup to finish it.`,
      );
      const other = join(dirname(store.sqliteFile!), 'other.sqlite');
      expect(await command('cp', [backup, other])).toMatchObject({ code: 0 });
      const wrongBackup = await restore(store, other);
      expect(wrongBackup.code).toBe(1);
      expect(wrongBackup.stderr.trim()).toMatch(/^Could not restore: a restore of .*backup\.sqlite into .* has not finished/);
      expect(await restore(store, backup)).toMatchObject({ code: 0, stderr: '' });
      expect(existsSync(marker)).toBe(false);
      const again = await each.start();
      for (const id of kept) expect((await fetch(`${again.url}/users/${id}`)).status).toBe(200);
      for (const id of lost) expect((await fetch(`${again.url}/users/${id}`)).status).toBe(404);
      expect(await create(again, 1)).toEqual([lost.at(-1)! + 1]);
    },
    60_000,
  );

  test('restore refuses a backup whose schema the migrations did not make, and the store keeps its users', async () => {
    const { store } = each;
    const { backup, before: ids } = await backedUp(3, 0);
    await each.stop();
    const tampered = new SqliteDatabase(backup);
    tampered.exec('create trigger keep_one after insert on users begin delete from users where id <> new.id; end');
    tampered.close();
    const refused = await restore(store, backup);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(
      `Could not restore: ${backup} holds a schema the migrations do not make (it has trigger keep_one): a store it is not, or one changed by hand`,
    );
    const again = await each.start();
    for (const id of ids) expect((await fetch(`${again.url}/users/${id}`)).status).toBe(200);
  }, 30_000);

  test.each([
    [
      'an existing file',
      async (dir: string) => ({ args: ['backup', join(dir, 'taken.sqlite')], prepare: () => writeFileSync(join(dir, 'taken.sqlite'), 'x') }),
      /^Could not back up: .*taken\.sqlite exists: name a new file \(a backup never overwrites one\)$/,
    ],
    ['no file named', async () => ({ args: ['backup'], prepare: () => undefined }), /^Could not back up: name the backup file: npm run backup -- <file>$/],
    [
      "a backup's leftover partial file",
      async (dir: string) => ({
        args: ['backup', join(dir, 'taken.sqlite')],
        prepare: () => {
          new SqliteDatabase(join(dir, 'users.sqlite')).close();
          writeFileSync(join(dir, 'taken.sqlite.partial'), '');
        },
      }),
      /^Could not back up: .*taken\.sqlite\.partial exists: a backup to .*taken\.sqlite is under way, or one stopped half way\. If none runs, remove it and back up again\.$/,
    ],
    [
      'an option restore does not take',
      async (dir: string) => ({ args: ['restore', join(dir, 'b.sqlite'), '--next-id=0'], prepare: () => undefined }),
      /^Could not restore: --next-id=0 is not an option of restore \(it takes --next-id=N, N a whole number from 1\)$/,
    ],
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

(postgresSuperuserAvailable ? describe : describe.skip)("PostgreSQL: pg_dump while the service writes, pg_restore, as docs/deployment.md's commands", () => {
  let store: TestStore;
  let server: ServerProcess | undefined;
  const suffix = randomBytes(4).toString('hex');
  const own = `user_records_own_${suffix}`;
  const restoredDatabase = `user_records_restored_${suffix}`;
  const dump = join(tmpdir(), `${restoredDatabase}.dump`);
  const upstream = new URL(process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
  const databaseUrl = (name: string) => Object.assign(new URL(upstream), { pathname: `/${name}` }).toString();
  beforeEach(async () => {
    store = await createTestStore('postgres');
  });
  afterEach(async () => {
    await server?.stop();
    server = undefined;
    await store.drop();
    for (const name of [own, restoredDatabase]) await postgresQuery(`drop database if exists ${name} with (force)`);
    rmSync(dump, { force: true });
  });

  /** What the page's commands name their database server's clients by, for createdb: the test's server. */
  const serverEnv = { PGHOST: upstream.hostname, PGPORT: upstream.port || '5432', PGUSER: upstream.username };
  const PAGE_URL = 'postgres://app@db.internal:5432/users';

  /**
   * Runs a block of the page's that dumps, creates the new database and restores into it, while creates go on;
   * then creates more, stops the service, and returns what was acknowledged before and after.
   */
  async function dumpUnderWrites(on: TestStore, script: string) {
    server = await startServerProcess(on);
    const writes = steadyWrites(server);
    await writes.atLeast(20);
    const before = [...writes.acknowledged];
    const dumped = await command('bash', ['-c', script], serverEnv);
    await writes.atLeast(before.length + 5);
    await writes.stop();
    expect(dumped).toMatchObject({ code: 0, stderr: '' });
    await server.stop();
    server = undefined;
    return { before, after: writes.acknowledged.filter((id) => !before.includes(id)) };
  }

  /** The page's step that keeps ids from being handed out twice, then a service on the restored database. */
  async function carryIdsOverAndServe(from: string, to: string, onRestored: TestStore, before: number[], after: number[]) {
    const carried = await command('bash', [
      '-c',
      docBlock('docs/deployment.md', 'pg-carry-ids', [
        [`${PAGE_URL}_restored`, to],
        [PAGE_URL, from],
      ]),
    ]);
    expect(carried).toMatchObject({ code: 0, stderr: '' });
    server = await startServerProcess(onRestored);
    for (const id of before) expect((await fetch(`${server.url}/users/${id}`)).status).toBe(200);
    const created = await fetch(`${server.url}/users`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(buildUserInput()),
    });
    expect(created.status).toBe(201);
    expect(((await created.json()) as { id: number }).id).toBeGreaterThan(Math.max(...after));
    expect(before.length).toBeGreaterThan(20);
  }

  test('a database of its own: the whole database dumped and restored into a new one, ids carried over', async () => {
    await postgresQuery(`create database ${own}`);
    const script = docBlock('docs/deployment.md', 'pg-dump-database', [
      [`${PAGE_URL}_restored`, databaseUrl(restoredDatabase)],
      [PAGE_URL, databaseUrl(own)],
      ['createdb users_restored', `createdb ${restoredDatabase}`],
      ['users.dump', dump],
    ]);
    const { before, after } = await dumpUnderWrites({ ...store, url: databaseUrl(own) }, script);
    await carryIdsOverAndServe(databaseUrl(own), databaseUrl(restoredDatabase), { ...store, url: databaseUrl(restoredDatabase) }, before, after);
  }, 60_000);

  test('a schema of its own: the schema dumped, pg_trgm installed in the new database, restored, ids carried over', async () => {
    const schema = new URL(store.url).searchParams.get('options')!.replace('-c search_path=', '');
    const target = databaseUrl(restoredDatabase);
    const script = docBlock('docs/deployment.md', 'pg-dump-schema', [
      [`${PAGE_URL}_restored`, target],
      [PAGE_URL, upstream.toString()],
      ['--schema=myschema', `--schema=${schema}`],
      ['createdb users_restored', `createdb ${restoredDatabase}`],
      ['users.dump', dump],
    ]);
    const { before, after } = await dumpUnderWrites(store, script);
    const inSchema = (url: string) => Object.assign(new URL(url), { search: `?options=${encodeURIComponent(`-c search_path=${schema}`)}` }).toString();
    await carryIdsOverAndServe(inSchema(upstream.toString()), inSchema(target), { ...store, url: inSchema(target) }, before, after);
  }, 60_000);
});
