import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from './dialect.js';

// Frozen in time: a migration never imports application code, so later changes cannot rewrite history.

/**
 * A user's shard of the count is its id modulo this: concurrent creates on PostgreSQL then update different
 * rows instead of queueing for one row's lock until each commits.
 */
const SHARDS = 16;

/**
 * The triggers that keep the count. SQLite's fire per row. PostgreSQL's fire per statement, from its
 * transition table: a bulk insert of 5,000 rows updates each shard once, not 5,000 times (each update leaves a
 * dead row version that slows reading the total until a vacuum); shards are updated in order, so concurrent
 * statements cannot deadlock.
 */
const COUNTING_TRIGGERS = {
  sqlite: {
    create: [
      `create trigger users_counted_insert after insert on users begin update user_count set n = n + 1 where shard = new.id % ${SHARDS}; end`,
      `create trigger users_counted_delete after delete on users begin update user_count set n = n - 1 where shard = old.id % ${SHARDS}; end`,
    ],
    drop: ['drop trigger users_counted_insert', 'drop trigger users_counted_delete'],
  },
  postgres: {
    create: (['insert', 'delete'] as const).flatMap((change) => {
      const [rows, sign] = change === 'insert' ? ['new', '+'] : ['old', '-'];
      return [
        `create function users_counted_${change}() returns trigger language plpgsql as $$
             declare changed record;
             begin
               for changed in select id % ${SHARDS} as shard, count(*) as k from changed_rows group by 1 order by 1 loop
                 update user_count set n = n ${sign} changed.k where shard = changed.shard;
               end loop;
               return null;
             end $$`,
        `create trigger users_counted_${change} after ${change} on users referencing ${rows} table as changed_rows
             for each statement execute function users_counted_${change}()`,
      ];
    }),
    drop: ['insert', 'delete'].flatMap((change) => [`drop trigger users_counted_${change} on users`, `drop function users_counted_${change}()`]),
  },
} as const;

/**
 * The number of users, kept by triggers in the transaction of every insert and delete, so that a page of
 * `GET /api/users` reads its total from 16 rows instead of counting every user, which costs a large store
 * more than the page itself. A rolled-back create rolls its count back with it.
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await db.schema
    .createTable('user_count')
    .addColumn('shard', 'integer', (column) => column.primaryKey())
    .addColumn('n', 'bigint', (column) => column.notNull())
    .execute();
  const shards = Array.from({ length: SHARDS }, (_, shard) => ({ shard, n: 0 }));
  await db
    .insertInto('user_count' as never)
    .values(shards as never)
    .execute();
  await sql`update user_count set n = (select count(*) from users where users.id % ${sql.lit(SHARDS)} = user_count.shard)`.execute(db);
  for (const statement of COUNTING_TRIGGERS[dialect].create) await sql.raw(statement).execute(db);
}

/** Drops the triggers and the count. */
export async function down(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  for (const statement of COUNTING_TRIGGERS[dialect].drop) await sql.raw(statement).execute(db);
  await db.schema.dropTable('user_count').execute();
}
