import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { runServerToExit, startServerProcess } from '../support/server-process.js';
import { testEnv } from '../support/test-server.js';
import { createTestStore, describeEachDialect, type TestStore } from '../support/test-store.js';
import { openDatabase } from '../../server/db/database.js';
import { loadConfig } from '../../server/config.js';
import { sql } from 'kysely';

// Migrations as a step of their own: `npm run migrate` before a rollout, instances that only check the schema
// (MIGRATE_AT_START=false), and an instance that finds a schema newer than it refuses to start in one line.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

/** `npm run --silent migrate` against the store, as an operator runs it (no credentials in its environment). */
async function migrate(store: TestStore): Promise<{ code: number; output: string }> {
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: store.url };
  try {
    const { stdout, stderr } = await run('npm', ['run', '--silent', 'migrate'], { cwd: ROOT, env });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, output: stdout + stderr };
  }
}

const lines = (output: string) =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg: string; migration?: string });

describeEachDialect((dialect) => {
  let store: TestStore;
  beforeEach(async () => {
    store = await createTestStore(dialect);
  });
  afterEach(() => store.drop());

  test('npm run migrate applies every migration once, says so, and exits 0; a second run applies none', async () => {
    const first = await migrate(store);
    expect(first.code).toBe(0);
    const applied = lines(first.output)
      .filter((line) => line.msg === 'applied a migration')
      .map((line) => line.migration);
    expect(applied.length).toBeGreaterThanOrEqual(12);
    expect(applied[0]).toBe('2026-11-21-01-create-users');
    expect(lines(first.output).at(-1)).toMatchObject({ msg: "the store's schema is up to date", migrations: applied.length });
    const second = await migrate(store);
    expect(second.code).toBe(0);
    expect(lines(second.output).map((line) => line.msg)).toEqual(["the store's schema is up to date"]);
  }, 60_000);

  test('with MIGRATE_AT_START=false an instance refuses a schema that lacks migrations, and starts once npm run migrate ran', async () => {
    const refused = await runServerToExit(store, { MIGRATE_AT_START: 'false', LOG_LEVEL: 'info' }, 20_000);
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(
      /^Could not start: the store's schema lacks \d+ migrations this version needs \(2026-11-21-01-create-users, .*\)\. Run the migration with this version first \(make migrate; in the image: node dist\/server\/tools\/migrate\.js\), or start with MIGRATE_AT_START=true\.$/m,
    );
    expect((await migrate(store)).code).toBe(0);
    const server = await startServerProcess(store, { MIGRATE_AT_START: 'false', LOG_LEVEL: 'info' });
    try {
      expect((await fetch(`${server.url}/users/2`)).status).toBe(200);
      expect(server.output()).not.toContain('applied a migration');
    } finally {
      await server.stop();
    }
  }, 60_000);

  test.each([['true'], ['false']])(
    'with MIGRATE_AT_START=%s an instance refuses a schema a newer version migrated, in one line',
    async (migrateAtStart) => {
      expect((await migrate(store)).code).toBe(0);
      // What a newer version leaves behind: a migration this one does not know.
      const database = await openDatabase(loadConfig(testEnv(store)).database);
      try {
        await sql`insert into kysely_migration (name, timestamp) values ('2099-01-01-01-from-the-future', '2099-01-01T00:00:00.000Z')`.execute(database.db);
      } finally {
        await database.close();
      }
      const refused = await runServerToExit(store, { MIGRATE_AT_START: migrateAtStart, LOG_LEVEL: 'info' }, 20_000);
      expect(refused.code).toBe(1);
      expect(refused.output.trim()).toBe(
        "Could not start: the store's schema is newer than this version of the service (it has migration 2099-01-01-01-from-the-future, which this version does not know). Run a version at least as new as the one that migrated it.",
      );
      const migrated = await migrate(store);
      expect(migrated.code).toBe(1);
      expect(migrated.output).toContain("Could not migrate: the store's schema is newer than this version of the service");
    },
    60_000,
  );
});
