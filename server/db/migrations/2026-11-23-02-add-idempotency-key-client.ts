import type { Kysely } from 'kysely';

// Frozen in time: a migration never imports application code, so later changes cannot rewrite history.

/** Adds the client a key was used by, indexed by age, so that each client keeps a bounded number of keys. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').addColumn('client', 'text').execute();
  await db.schema.createIndex('idempotency_keys_client_created_at').on('idempotency_keys').columns(['client', 'created_at']).execute();
}

/** Drops the index and the column. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('idempotency_keys_client_created_at').execute();
  await db.schema.alterTable('idempotency_keys').dropColumn('client').execute();
}
