import { PostgresDialect, sql, type Kysely } from 'kysely';
import type { StoreTimeouts } from '../../config.js';
import type { PoolMode } from '../../config-readers.js';
import type { DialectSupport } from '../dialect-support.js';
import { postgresOutage } from '../outage.js';
import { postgresCounts } from './counts.js';
import { createPostgresPool, type ConnectionFault } from './pool.js';
import { postgresSearchIndex } from './search-index.js';
import { postgresWriter } from './writes.js';

// A PostgreSQL database as the service's store: its pool, its schema's SQL, its writes and its search index.

/**
 * How long a statement of a migration may take on PostgreSQL. Building an index over every user is one
 * statement (pg_trgm's took 9 s per 1,000,000 users here), far beyond a request's statement timeout; a
 * migration runs once, before the service listens.
 */
const MIGRATION_STATEMENT_MS = 30 * 60_000;

/** A user's folded names and address as PostgreSQL's substring index holds them, one per line. */
const POSTGRES_SEARCHED_TEXT = `first_name_key || E'\\n' || last_name_key || E'\\n' || email_key`;

/** A name quoted as an SQL identifier. */
const identifier = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * pg_trgm's GIN index (https://www.postgresql.org/docs/current/pgtrgm.html) over the folded copies, where the
 * database has pg_trgm or lets the service install it (a trusted extension since PostgreSQL 13: a role with
 * CREATE on the database may). Where it cannot, the migration still succeeds, the service says so when it
 * starts, and searches examine users one by one; an operator may add the index later (README).
 *
 * A GIN index answers with a bitmap of every entry of the trigrams it is asked about: it cannot stop after
 * a few, as FTS5 does. For 1,000,000 users, the bitmap of a trigram that every user holds took 50 ms; of one
 * that 3,346 hold, 1.4 ms. users_holding() reads through the index whatever the planner guesses (a
 * sequential scan stopped by a LIMIT costs in proportion to where the matches lie in the table, which
 * statistics cannot tell): it runs with sequential and plain index scans off, so a bitmap scan of the GIN
 * index is the only plan, and it stops at `most` users that match the pattern (all when null).
 */
const POSTGRES_SUBSTRING_INDEX = {
  async create(db: Kysely<unknown>) {
    // The migration runs in a transaction: a refusal must not abort it.
    await sql`savepoint install_pg_trgm`.execute(db);
    try {
      await sql`create extension if not exists pg_trgm`.execute(db);
      await sql`release savepoint install_pg_trgm`.execute(db);
    } catch {
      await sql`rollback to savepoint install_pg_trgm`.execute(db);
    }
    // ROWS tells the planner it returns few users (it is asked only once they are known to be few): a larger
    // guess had PostgreSQL join them to every user of a 100,000-user table read whole (22 ms) rather than
    // look each up by id (0.7 ms); with this one a whole table is read only where it is a few pages.
    await sql.raw(`create function users_holding(pattern text, most integer) returns table (match_id integer) language sql stable rows 20
      set enable_seqscan = off set enable_indexscan = off
      as $$ select id from users where (${POSTGRES_SEARCHED_TEXT}) like pattern limit most $$`).execute(db);
    const { rows } = await sql<{ schema: string }>`
      select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`.execute(db);
    // Named with the extension's schema, which need not be on the service's search_path.
    if (rows[0]) await sql.raw(`create index users_search on users using gin ((${POSTGRES_SEARCHED_TEXT}) ${identifier(rows[0].schema)}.gin_trgm_ops)`).execute(db);
  },
  async drop(db: Kysely<unknown>) {
    // The extension stays: other schemas of the database may use it.
    await sql`drop index if exists users_search`.execute(db);
    await sql`drop function users_holding(text, integer)`.execute(db);
  },
};

/**
 * Finds the users whose folded names or address hold `needle`, through the GIN index only (as users_holding
 * does), narrowed by `key` (a LIKE pattern every such user holds; strpos, which no index serves, then checks
 * the needle itself), and stops at `most` of them (all when null). ROWS as for users_holding.
 */
const POSTGRES_SEARCH_FUNCTION = {
  create: [
    `create function users_matching(key text, needle text, most integer) returns table (match_id integer) language sql stable rows 20
       set enable_seqscan = off set enable_indexscan = off
       as $$ select id from users where (${POSTGRES_SEARCHED_TEXT}) like key and strpos(${POSTGRES_SEARCHED_TEXT}, needle) > 0 limit most $$`,
  ],
  drop: ['drop function users_matching(text, text, integer)'],
};

export function postgres(url: string, poolSize: number, poolMode: PoolMode, timeouts: StoreTimeouts, onFault: ConnectionFault): DialectSupport {
  const pool = createPostgresPool(url, poolSize, timeouts, onFault, poolMode);
  return {
    dialect: new PostgresDialect({ pool }),
    // One connection, closed when the migrations are done.
    migrationDialect: () => new PostgresDialect({ pool: createPostgresPool(url, 1, { ...timeouts, statementMs: MIGRATION_STATEMENT_MS }, onFault, poolMode) }),
    migratesInOneTransaction: true,
    sharedCounters: postgresCounts(url, poolMode, timeouts, onFault),
    flavour: {
      // Identity columns are sequences: ids are never reused, even after a rollback or a delete.
      generatedIntegerKey: (column) => column.generatedByDefaultAsIdentity(),
      // Per statement, from its transition table: a bulk insert of 5,000 rows updates each shard once, not
      // 5,000 times (each update leaves a dead row version; 200,000 of them made reading the total 6 times
      // slower until a vacuum). Shards are updated in order, so concurrent statements cannot deadlock.
      countingTriggers: ({ table, counter, shards }) =>
        (['insert', 'delete'] as const).flatMap((change) => {
          const [rows, sign] = change === 'insert' ? ['new', '+'] : ['old', '-'];
          return [
            `create function ${table}_counted_${change}() returns trigger language plpgsql as $$
             declare changed record;
             begin
               for changed in select id % ${shards} as shard, count(*) as k from changed_rows group by 1 order by 1 loop
                 update ${counter} set n = n ${sign} changed.k where shard = changed.shard;
               end loop;
               return null;
             end $$`,
            `create trigger ${table}_counted_${change} after ${change} on ${table} referencing ${rows} table as changed_rows
             for each statement execute function ${table}_counted_${change}()`,
          ];
        }),
      droppingTriggers: ({ table }) =>
        ['insert', 'delete'].flatMap((change) => [`drop trigger ${table}_counted_${change} on ${table}`, `drop function ${table}_counted_${change}()`]),
      // The database's default collation follows its locale (en_US sorts "a" beside "A"); "C" is byte order.
      byteOrderText: 'text collate "C"',
      // The substring index needs pg_trgm, an extension the database may not have: see POSTGRES_SUBSTRING_INDEX.
      substringIndex: { create: [], drop: [] },
      reindexOnlyChanged: { create: [], drop: [] },
      optionalSubstringIndex: POSTGRES_SUBSTRING_INDEX,
      searchFunction: POSTGRES_SEARCH_FUNCTION,
    },
    searchIndex: async (db) => {
      const { rows } = await sql<{ present: boolean }>`
        select exists (select 1 from pg_indexes where schemaname = current_schema() and indexname = 'users_search') as present`.execute(db);
      return rows[0]!.present ? postgresSearchIndex : undefined;
    },
    searchConnections: Math.max(1, Math.floor(poolSize / 2)),
    reader: () => undefined,
    outage: postgresOutage,
    // The server's disk is not ours to see; a full one fails writes with 53100, which readiness hears of.
    checkRoom: async () => {},
    writer: postgresWriter,
    // Kysely looks for its migration tables in every schema unless told which one: name the schema that
    // search_path selects, so that several services (or test runs) can share one database.
    async migrationSchema(db) {
      const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
      const schema = rows[0]?.schema;
      if (!schema) throw new Error('no schema of search_path exists in this database');
      return schema;
    },
  };
}
