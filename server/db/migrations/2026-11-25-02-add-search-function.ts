import { sql, type Kysely } from 'kysely';
import type { SqlFlavour } from './index.js';

// Frozen in time: a migration never imports application code, so later changes cannot rewrite history.

/**
 * The function through which a search reads an extension's substring index (PostgreSQL's), finding the users
 * that hold a text and stopping at a number of them: users_holding() could only stop at users that hold a
 * coarser key, so a count of the users that hold the text itself read every holder of the key.
 */
export async function up(db: Kysely<unknown>, flavour: SqlFlavour): Promise<void> {
  for (const statement of flavour.searchFunction.create) await sql.raw(statement).execute(db);
}

/** Drops the function. */
export async function down(db: Kysely<unknown>, flavour: SqlFlavour): Promise<void> {
  for (const statement of flavour.searchFunction.drop) await sql.raw(statement).execute(db);
}
