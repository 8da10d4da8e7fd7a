import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kysely } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import type { StoreTimeouts } from '../../server/config.js';
import type { DialectSupport } from '../../server/db/dialect-support.js';
import { MIGRATION_NAMES, migrationProvider } from '../../server/db/migrations/index.js';
import { postgres } from '../../server/db/postgres/store.js';
import { sqlite } from '../../server/db/sqlite/store.js';
import type { Tables } from '../../server/db/tables.js';
import { createTestStore, describeEachDialect, type Dialect, type TestStore } from '../support/test-store.js';

// A migration is frozen once written: the statements it runs on each dialect, up and down, are held against a
// snapshot taken when it was written (tests/migrations/<dialect>/<name>.sql), so that no change to application
// code can rewrite a migration that stores have already run. A new migration's snapshot is written by running
// this test with WRITE_MIGRATION_SNAPSHOTS=1; an existing snapshot is never written over.

const SNAPSHOTS = fileURLToPath(new URL('../migrations/', import.meta.url));
const TIMEOUTS: StoreTimeouts = { statementMs: 60_000, connectMs: 5000, idleMs: 30_000, keepAliveMs: 10_000 };

/** The statements each migration ran, by `<name> up` and `<name> down`, each with its parameters. */
async function statementsOfEachMigration(dialect: Dialect, store: TestStore | undefined): Promise<Map<string, string[]>> {
  const support: DialectSupport = dialect === 'sqlite' ? sqlite(':memory:', TIMEOUTS) : postgres(store!.url, 1, 'session', TIMEOUTS, () => {});
  const ran = new Map<string, string[]>();
  let current: string | undefined;
  const db = new Kysely<Tables>({
    dialect: support.dialect,
    log: (event) => {
      if (current === undefined) return;
      const parameters = event.query.parameters.length > 0 ? `\n-- parameters: ${JSON.stringify(event.query.parameters)}` : '';
      // pg_trgm lives in whichever schema first installed it in this database: not the migration's to say.
      const text = event.query.sql.trim().replace(/"[^"]+"\.gin_trgm_ops/g, '"<pg_trgm\'s schema>".gin_trgm_ops');
      ran.get(current)!.push(`${text};${parameters}`);
    },
  });
  const provider = migrationProvider(support.kind);
  /** Each migration, recording what it runs under its name while it runs. */
  const recording: MigrationProvider = {
    getMigrations: async () =>
      Object.fromEntries(
        Object.entries(await provider.getMigrations()).map(([name, migration]) => {
          const step = (way: 'up' | 'down', run: Migration['up']) => async (on: Kysely<unknown>) => {
            current = `${name} ${way}`;
            ran.set(current, []);
            try {
              await run(on);
            } finally {
              current = undefined;
            }
          };
          return [name, { up: step('up', migration.up), ...(migration.down ? { down: step('down', migration.down) } : {}) }];
        }),
      ),
  };
  try {
    const schema = await support.migrationSchema(db);
    const migrator = new Migrator({ db, provider: recording, ...(schema ? { migrationTableSchema: schema } : {}) });
    const up = await migrator.migrateToLatest();
    if (up.error) throw up.error;
    for (let step = 0; step < MIGRATION_NAMES.length; step++) {
      const down = await migrator.migrateDown();
      if (down.error) throw down.error;
    }
  } finally {
    await db.destroy();
  }
  return ran;
}

describeEachDialect((dialect) => {
  let store: TestStore | undefined;
  let ran: Map<string, string[]>;
  beforeAll(async () => {
    store = dialect === 'postgres' ? await createTestStore('postgres') : undefined;
    ran = await statementsOfEachMigration(dialect, store);
  }, 60_000);
  afterAll(async () => {
    await store?.drop();
  });

  test.each(MIGRATION_NAMES.map((name) => [name]))('%s runs the statements it ran when it was written', (name) => {
    const file = join(SNAPSHOTS, dialect, `${name}.sql`);
    const text = ['up', 'down']
      .filter((way) => ran.has(`${name} ${way}`))
      .map((way) => `-- ${way}\n${ran.get(`${name} ${way}`)!.join('\n')}\n`)
      .join('\n');
    if (!existsSync(file)) {
      if (process.env.WRITE_MIGRATION_SNAPSHOTS !== '1') {
        throw new Error(`${file} is missing: a new migration's snapshot is written by this test with WRITE_MIGRATION_SNAPSHOTS=1`);
      }
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
    }
    expect(text).toBe(readFileSync(file, 'utf8'));
  });
});
