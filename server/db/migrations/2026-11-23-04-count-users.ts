import { sql, type Kysely } from 'kysely';
import type { SqlFlavour } from './index.js';

// Frozen in time: a migration never imports application code, so later changes cannot rewrite history.

/**
 * A user's shard of the count is its id modulo this: concurrent creates on PostgreSQL then update different
 * rows instead of queueing for one row's lock until each commits.
 */
const SHARDS = 16;

/**
 * The number of users, kept by triggers in the transaction of every insert and delete, so that a page of
 * `GET /api/users` reads its total from 16 rows instead of counting every user (at 1,000,000 users that took
 * 60-120 ms of SQLite's time per request). A rolled-back create rolls its count back with it.
 */
export async function up(db: Kysely<unknown>, flavour: SqlFlavour): Promise<void> {
  await db.schema
    .createTable('user_count')
    .addColumn('shard', 'integer', (column) => column.primaryKey())
    .addColumn('n', 'bigint', (column) => column.notNull())
    .execute();
  const shards = Array.from({ length: SHARDS }, (_, shard) => ({ shard, n: 0 }));
  await db.insertInto('user_count' as never).values(shards as never).execute();
  await sql`update user_count set n = (select count(*) from users where users.id % ${sql.lit(SHARDS)} = user_count.shard)`.execute(db);
  for (const statement of flavour.countingTriggers({ table: 'users', counter: 'user_count', shards: SHARDS })) await sql.raw(statement).execute(db);
}

/** Drops the triggers and the count. */
export async function down(db: Kysely<unknown>, flavour: SqlFlavour): Promise<void> {
  for (const statement of flavour.droppingTriggers({ table: 'users', counter: 'user_count' })) await sql.raw(statement).execute(db);
  await db.schema.dropTable('user_count').execute();
}
