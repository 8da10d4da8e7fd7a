import type { Kysely } from 'kysely';

// Frozen in time: a migration never imports application code, so later changes cannot rewrite history.

/**
 * Adds the owner of a key: a token of the request that claimed it (or took it over), which that request
 * must still hold when it commits the user, so that a create stalled past its lock cannot commit beside the
 * retry that took its key over.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').addColumn('owner', 'text').execute();
}

/** Drops the column. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').dropColumn('owner').execute();
}
