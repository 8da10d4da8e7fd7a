import { mkdirSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, sql, type Dialect, type KyselyConfig, type RawBuilder } from 'kysely';
import type { QueryEvent } from '../tracing.js';
import type { DatabaseConfig, StoreTimeouts } from '../config.js';
import { groupCommit, type Write } from './group-commit.js';
import { migrationProvider, type SqlFlavour } from './migrations/index.js';
import { postgresOutage, sqliteOutage, StoreFault } from './outage.js';
import { createPostgresPool, type ConnectionFault } from './postgres-pool.js';
import { MultiProcessSqliteDialect, withStatementCache } from './sqlite-dialect.js';
import { postgresCounters, type SharedCounters } from './shared-counters.js';
import type { Tables } from './tables.js';

// The only module that names a SQL dialect (with the modules it imports from this folder).

/** An open database with its schema migrated, and a way to tell outages from bugs. */
export interface Database {
  readonly kind: DatabaseConfig['kind'];
  readonly db: Kysely<Tables>;
  /** Runs a unit of writes; it resolves once its changes are durable. All writes go through it. */
  readonly write: Write;
  /** The outage code of an error that means the store cannot answer now (down, killed, timed out, disk full, closed); undefined for a bug. */
  outage(error: unknown): string | undefined;
  /** Resolves when a request would find the store working: it answers a query, and (SQLite) its disk has room. */
  probe(): Promise<void>;
  /** Per-client counts every instance on this store shares; undefined where the store is one machine's (SQLite). */
  readonly sharedCounters: SharedCounters | undefined;
  /** The substring index of the users' folded names and addresses, where the store has one. */
  readonly searchIndex: SearchIndex | undefined;
  close(): Promise<void>;
}

/**
 * A trigram index of the users' folded names and addresses (the text of a search is folded too). A lookup
 * costs in proportion to the entries it reads, so a search asks whether one of its trigrams is rare, reading
 * at most `limit` + 1 entries, and then reads only the users that hold that trigram (see user-lists.ts).
 */
export interface SearchIndex {
  /** Whether at most `limit` users hold the trigram (three characters). */
  holdsAtMost(trigram: string, limit: number, db: Kysely<Tables>): Promise<boolean>;
  /**
   * A subquery of the ids (`match_id`) of the users whose folded names or address hold the trigram. One
   * trigram, not the whole text: FTS5 checks a phrase against the positions of every trigram in it, and a
   * phrase of common trigrams whose one rare trigram 2,000 users held took 330 ms for 1,000,000 users; its
   * rare trigram alone, 0.13 ms. The caller checks the whole text against those users.
   */
  holding(trigram: string): RawBuilder<{ match_id: number }>;
}

/** How to open the store: its bounds, whom to tell when a connection fails, and when each query ends (tracing). */
export interface OpenOptions {
  readonly timeouts?: StoreTimeouts;
  readonly onConnectionFault?: ConnectionFault;
  readonly onQuery?: (event: QueryEvent) => void;
}

/** Kysely's log hook, called as each query ends (in the async context of the request that ran it). */
function queryLog(onQuery: (event: QueryEvent) => void): KyselyConfig['log'] {
  return (event) => onQuery({ sql: event.query.sql, durationMs: event.queryDurationMillis, failed: event.level === 'error' });
}

interface DialectSupport {
  readonly dialect: Dialect;
  readonly flavour: SqlFlavour;
  outage(error: unknown): string | undefined;
  /** Checks beyond `select 1` that tell whether writes would succeed. */
  checkRoom(): Promise<void>;
  /** How units of writes run: in a transaction each, or committed together. */
  writer(db: Kysely<Tables>): Write;
  /** Schema that holds Kysely's migration tables, when the dialect has schemas. */
  migrationSchema(db: Kysely<Tables>): Promise<string | undefined>;
  readonly sharedCounters: SharedCounters | undefined;
  readonly searchIndex: SearchIndex | undefined;
}

const DEFAULT_TIMEOUTS: StoreTimeouts = { statementMs: 5000, connectMs: 5000, idleMs: 30_000, keepAliveMs: 10_000 };

/**
 * Free space below which an SQLite store is reported not ready: a commit appends pages to the WAL, and a
 * checkpoint copies them into the database file, so a nearly full disk fails writes (SQLITE_FULL) first.
 */
export const MIN_FREE_BYTES = 1024 * 1024;

/** statfs is one cheap system call, so readiness can check it on every poll, however often it is polled. */
async function checkFreeSpace(filename: string): Promise<void> {
  if (filename === ':memory:') return;
  const { bavail, bsize } = await statfs(dirname(filename));
  if (bavail * bsize < MIN_FREE_BYTES) throw new StoreFault('SQLITE_FULL', 'the disk of the SQLite database is nearly full');
}

/**
 * A user's folded names and address as the substring index holds them, one per line (a search holds no line
 * break), from the columns of `row` (`new.` in a trigger, nothing in a query of users).
 */
const searchedText = (row: 'new.' | '') => `${row}first_name_key || char(10) || ${row}last_name_key || char(10) || ${row}email_key`;

/**
 * FTS5's trigram index (https://sqlite.org/fts5.html#the_trigram_tokenizer) over the folded copies, which are
 * already case-folded (case_sensitive 1 keeps them as they are). Contentless: it holds the index, not a second
 * copy of the text; contentless_delete lets triggers remove a user's entry.
 */
const SQLITE_SUBSTRING_INDEX = {
  create: [
    `create virtual table users_search using fts5(keys, content='', contentless_delete=1, tokenize='trigram case_sensitive 1')`,
    `insert into users_search (rowid, keys) select id, ${searchedText('')} from users`,
    `create trigger users_search_insert after insert on users begin
       insert into users_search (rowid, keys) values (new.id, ${searchedText('new.')}); end`,
    `create trigger users_search_update after update of first_name_key, last_name_key, email_key on users begin
       delete from users_search where rowid = old.id;
       insert into users_search (rowid, keys) values (new.id, ${searchedText('new.')}); end`,
    `create trigger users_search_delete after delete on users begin delete from users_search where rowid = old.id; end`,
  ],
  drop: ['drop trigger users_search_insert', 'drop trigger users_search_update', 'drop trigger users_search_delete', 'drop table users_search'],
};

/** An FTS5 phrase: the text exactly, its double quotes doubled (https://sqlite.org/fts5.html#fts5_strings). */
const phrase = (text: string) => `"${text.replaceAll('"', '""')}"`;

const sqliteSearchIndex: SearchIndex = {
  async holdsAtMost(trigram, limit, db) {
    const { rows } = await sql<{ n: number }>`
      select count(*) as n from (select rowid from users_search where users_search match ${phrase(trigram)} limit ${limit + 1})`.execute(db);
    return rows[0]!.n <= limit;
  },
  holding: (trigram) => sql<{ match_id: number }>`(select rowid as match_id from users_search where users_search match ${phrase(trigram)})`,
};

function sqlite(filename: string, timeouts: StoreTimeouts): DialectSupport {
  if (filename !== ':memory:') mkdirSync(dirname(filename), { recursive: true });
  const database = new SqliteDatabase(filename);
  // WAL lets readers run beside the writer; FULL syncs the log on every commit, so an acknowledged write
  // survives a power loss as well as a crash (https://www.sqlite.org/pragma.html#pragma_synchronous).
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = FULL');
  database.pragma(`busy_timeout = ${timeouts.statementMs}`);
  return {
    dialect: new MultiProcessSqliteDialect({ database: withStatementCache(database) }, database),
    flavour: {
      // AUTOINCREMENT: an id, once deleted, is never handed out again (https://www.sqlite.org/autoinc.html).
      generatedIntegerKey: (column) => column.autoIncrement(),
      countingTriggers: ({ table, counter, shards }) => [
        `create trigger ${table}_counted_insert after insert on ${table} begin update ${counter} set n = n + 1 where shard = new.id % ${shards}; end`,
        `create trigger ${table}_counted_delete after delete on ${table} begin update ${counter} set n = n - 1 where shard = old.id % ${shards}; end`,
      ],
      droppingTriggers: ({ table }) => [`drop trigger ${table}_counted_insert`, `drop trigger ${table}_counted_delete`],
      // BINARY, SQLite's default collation, compares UTF-8 bytes: code point order.
      byteOrderText: 'text',
      substringIndex: SQLITE_SUBSTRING_INDEX,
    },
    searchIndex: sqliteSearchIndex,
    outage: sqliteOutage,
    checkRoom: () => checkFreeSpace(filename),
    // One connection and an fsync per commit: concurrent writes share commits (see group-commit.ts).
    writer: groupCommit,
    migrationSchema: async () => undefined,
    sharedCounters: undefined,
  };
}

function postgres(url: string, poolSize: number, timeouts: StoreTimeouts, onFault: ConnectionFault): DialectSupport {
  const pool = createPostgresPool(url, poolSize, timeouts, onFault);
  return {
    dialect: new PostgresDialect({ pool }),
    sharedCounters: postgresCounters(pool),
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
      // pg_trgm would serve; it is an extension the database may not have, and searches on PostgreSQL run on
      // its server, bounded by statement_timeout, never on the service's event loop.
      substringIndex: { create: [], drop: [] },
    },
    searchIndex: undefined,
    outage: postgresOutage,
    // The server's disk is not ours to see; a full one fails writes with 53100, which readiness hears of.
    checkRoom: async () => {},
    // Each statement commits on its own unless the unit must be atomic: a transaction would add two round
    // trips. Concurrent commits on the pool's connections share WAL flushes in the server itself.
    writer: (db) => (work, options) => (options?.atomic ? db.transaction().execute(work) : work(db)),
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

function dialectSupport(config: DatabaseConfig, { timeouts = DEFAULT_TIMEOUTS, onConnectionFault = () => {} }: OpenOptions): DialectSupport {
  return config.kind === 'sqlite'
    ? sqlite(config.filename, timeouts)
    : postgres(config.url, config.poolSize, timeouts, onConnectionFault);
}

/** Opens the database named by the configuration and brings its schema up to date. */
export async function openDatabase(config: DatabaseConfig, options: OpenOptions = {}): Promise<Database> {
  const support = dialectSupport(config, options);
  const db = new Kysely<Tables>({ dialect: support.dialect, ...(options.onQuery ? { log: queryLog(options.onQuery) } : {}) });
  try {
    const migrationTableSchema = await support.migrationSchema(db);
    const provider = migrationProvider(support.flavour);
    const { error } = await new Migrator({ db, provider, ...(migrationTableSchema ? { migrationTableSchema } : {}) }).migrateToLatest();
    if (error) throw error;
  } catch (error) {
    await db.destroy();
    throw new Error(`Could not prepare the database: ${(error as Error).message}`, { cause: error });
  }
  const probe = async () => {
    await sql`select 1`.execute(db);
    await support.checkRoom();
  };
  const { sharedCounters, searchIndex } = support;
  return { kind: config.kind, db, write: support.writer(db), outage: support.outage, probe, sharedCounters, searchIndex, close: () => db.destroy() };
}
