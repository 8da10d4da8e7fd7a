import { sql, type Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import type { DialectSupport } from './dialect-support.js';
import { MIGRATION_NAMES, migrationProvider } from './migrations/index.js';
import type { Tables } from './tables.js';

// Bringing a store's schema up to date, or checking that it is, before the service uses it.

/**
 * The store's schema is not one this version can use (newer than it, or lacking migrations it must not apply
 * itself); its message is the line to show, naming what to do.
 */
export class SchemaMismatch extends Error {
  override readonly name = 'SchemaMismatch';
}

/**
 * The migrations this version has that the store's schema lacks. Throws a SchemaMismatch when the schema holds
 * migrations this version does not know: a newer version migrated it, and this one would misread its tables.
 */
async function pendingMigrations(db: Kysely<Tables>): Promise<string[]> {
  let applied: string[];
  try {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
    applied = rows.map((row) => row.name);
  } catch (error) {
    // A new store: Kysely's bookkeeping table is made by the first migration run. Anything else is an error.
    if (!/kysely_migration" does not exist|no such table: kysely_migration/.test((error as Error).message)) throw error;
    applied = [];
  }
  const unknown = applied.filter((name) => !MIGRATION_NAMES.includes(name)).sort();
  if (unknown.length > 0) {
    throw new SchemaMismatch(
      `Could not start: the store's schema is newer than this version of the service (it has migration${unknown.length === 1 ? '' : 's'} ${unknown.join(', ')}, which this version does not know). Run a version at least as new as the one that migrated it.`,
    );
  }
  return MIGRATION_NAMES.filter((name) => !applied.includes(name));
}

/** The transaction lock PostgreSQL's migrations run under (any number; "user-records" in ASCII). */
const MIGRATION_LOCK = 0x7573657273n;

/**
 * Applies the migrations the schema lacks (`apply`), or fails naming them (`check`); `onMigrated` is told the
 * names applied. Fails, either way, on a schema that holds migrations this version does not know.
 */
export async function migrateSchema(
  support: DialectSupport,
  migrating: Kysely<Tables>,
  options: { readonly migrations?: 'apply' | 'check'; readonly onMigrated?: (names: readonly string[]) => void },
): Promise<void> {
  const migrationTableSchema = await support.migrationSchema(migrating);
  const provider = migrationProvider(support.kind);
  const pending = await pendingMigrations(migrating);
  const migrate = async (on: Kysely<Tables>) => {
    const { error, results } = await new Migrator({ db: on, provider, ...(migrationTableSchema ? { migrationTableSchema } : {}) }).migrateToLatest();
    if (error) throw error;
    options.onMigrated?.((results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName));
  };
  if (options.migrations === 'check') {
    if (pending.length > 0) {
      throw new SchemaMismatch(
        `Could not start: the store's schema lacks ${pending.length} migration${pending.length === 1 ? '' : 's'} this version needs (${pending.join(', ')}). Run the migration with this version first (make migrate; in the image: node dist/server/tools/migrate.js), or start with MIGRATE_AT_START=true.`,
      );
    }
  } else if (support.migratesInOneTransaction) {
    await migrating.transaction().execute(async (transaction) => {
      // Before Kysely checks for its tables: instances that start together would otherwise create them at
      // once, and the loser's error, which Kysely expects and checks, aborts this transaction.
      await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK})`.execute(transaction);
      await migrate(transaction);
    });
  } else {
    await migrate(migrating);
  }
}
