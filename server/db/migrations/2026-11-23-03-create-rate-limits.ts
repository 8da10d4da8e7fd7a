import type { Kysely } from 'kysely';

// Frozen in time: a migration never imports application code, so later changes cannot rewrite history.

/**
 * The per-client counts shared by every instance on this store, in the layout rate-limiter-flexible's
 * store limiter reads and writes (key, points, expire in ms since the epoch). Created here, under the
 * migrator's lock, rather than by the limiter's own CREATE TABLE IF NOT EXISTS, which races (a unique
 * violation on pg_type) when many instances start at once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('rate_limits')
    .addColumn('key', 'varchar(255)', (column) => column.primaryKey())
    .addColumn('points', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('expire', 'bigint')
    .execute();
}

/** Drops the table. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('rate_limits').execute();
}
