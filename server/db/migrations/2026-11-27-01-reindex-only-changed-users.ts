import { sql, type Kysely } from 'kysely';
import type { SqlFlavour } from './index.js';

// Frozen in time: a migration never imports application code, so later changes cannot rewrite history.

/**
 * The substring index re-indexes a user on an update only when the user's folded names or address changed:
 * a PUT or PATCH that keeps them (a retried PUT, a change of case, a change of nothing) no longer rewrites
 * the user's trigrams. Replaces one trigger; nothing to do where the database has none (PostgreSQL).
 */
export async function up(db: Kysely<unknown>, flavour: SqlFlavour): Promise<void> {
  for (const statement of flavour.reindexOnlyChanged.create) await sql.raw(statement).execute(db);
}

/** Re-indexes on every update that sets them again. */
export async function down(db: Kysely<unknown>, flavour: SqlFlavour): Promise<void> {
  for (const statement of flavour.reindexOnlyChanged.drop) await sql.raw(statement).execute(db);
}
