import type { Kysely } from 'kysely';
import type { SqlFlavour } from './index.js';

// Frozen in time: a migration never imports application code, so later changes cannot rewrite history.

/**
 * The substring index of the databases whose index rests on an extension (PostgreSQL's pg_trgm GIN index),
 * where the extension can be had; the migration succeeds without it. Built from the users stored, in one
 * statement that holds off writes while it runs: about 9 s per 1,000,000 users, once, before the service
 * listens.
 */
export async function up(db: Kysely<unknown>, flavour: SqlFlavour): Promise<void> {
  await flavour.optionalSubstringIndex.create(db);
}

/** Drops the index (and leaves the extension, which other schemas may use). */
export async function down(db: Kysely<unknown>, flavour: SqlFlavour): Promise<void> {
  await flavour.optionalSubstringIndex.drop(db);
}
