import { sql, type Kysely } from 'kysely';
import type { SqlFlavour } from './index.js';

// Frozen in time: a migration never imports application code, so later changes cannot rewrite history.

/**
 * A substring index of each user's folded names and address, where the database has one whose cost the
 * service can bound (SQLite's FTS5 trigram index; none yet on PostgreSQL, whose searches do not hold the
 * service's event loop). Filled from the users stored, in one statement: about 13 s per 1,000,000 users,
 * once, before the service listens.
 */
export async function up(db: Kysely<unknown>, flavour: SqlFlavour): Promise<void> {
  for (const statement of flavour.substringIndex.create) await sql.raw(statement).execute(db);
}

/** Drops the index and its triggers. */
export async function down(db: Kysely<unknown>, flavour: SqlFlavour): Promise<void> {
  for (const statement of flavour.substringIndex.drop) await sql.raw(statement).execute(db);
}
