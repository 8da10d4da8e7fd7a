import { mkdirSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, sql, type CompiledQuery, type Dialect, type KyselyConfig, type RawBuilder, type SqlBool } from 'kysely';
import { Migrator } from 'kysely/migration';
import type { QueryEvent } from '../tracing.js';
import type { DatabaseConfig, StoreTimeouts } from '../config.js';
import type { PoolMode } from '../config-readers.js';
import { groupCommit } from './sqlite/group-commit.js';
import type { Write } from './write.js';
import { MIGRATION_NAMES, migrationProvider, type SqlFlavour } from './migrations/index.js';
import { StartFailure } from '../startup/start-failure.js';
import { postgresOutage, sqliteOutage, StoreFault } from './outage.js';
import { createPostgresPool, refusedStartupParameter, type ConnectionFault } from './postgres/pool.js';
import { postgresWriter } from './postgres/writes.js';
import { MultiProcessSqliteDialect, withStatementCache } from './sqlite/dialect.js';
import { postgresSearchIndex } from './postgres/search-index.js';
import { sqliteSearchIndex } from './sqlite/search-index.js';
import { walIndexVersion } from './sqlite/wal-index.js';
import { postgresCounts, type SharedCounts } from './postgres/counts.js';
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
  readonly sharedCounters: SharedCounts | undefined;
  /** The substring index of the users' folded names and addresses, where the store has one. */
  readonly searchIndex: SearchIndex | undefined;
  /**
   * Searching statements that may run at once. On PostgreSQL, half the pool: however many searches are under
   * way, the other half of the connections stays free for every other request. SQLite runs one statement at a
   * time on the event loop; there the number of statements per turn is the bound (see user-lists.ts).
   */
  readonly searchConnections: number;
  /**
   * Runs a select at once, on a read-only connection of its own (SQLite): no await, no queue behind a write's
   * transaction, and it sees every committed write (WAL). Undefined where selects go through Kysely: on
   * PostgreSQL, on a store in memory (a second connection would be another store), and when queries are traced.
   */
  readonly readNow: ReadNow | undefined;
  /**
   * Runs a select at once on the same connection as readNow, and keeps no answer: a search's statements, which
   * read a bounded part of the store each, and whose complete replies are kept whole (server/http/reply-cache/).
   * Undefined where readNow is.
   */
  readonly readOnce: (<Row>(query: CompiledQuery<Row>) => Row[]) | undefined;
  /**
   * The store's version, read at once where the store can tell (the SQLite reader: it changes with every
   * commit, of this process or another): equal twice, nothing was committed in between. Undefined elsewhere.
   */
  readonly storeVersion: (() => number) | undefined;
  close(): Promise<void>;
}

/**
 * A select run synchronously: its rows. Given as compiled, its answer is kept under its SQL and parameters;
 * given as a key that names it wholly and a way to compile it, under the key, and compiled only when no
 * answer is kept (building a Kysely query cost more than SQLite took to answer it).
 */
export type ReadNow = <Row>(query: CompiledQuery<Row> | Keyed<Row>) => Row[];

/** A select named by a key of the caller's (which must not begin with `select`), compiled on demand. */
export interface Keyed<Row> {
  readonly key: string;
  compile(): CompiledQuery<Row>;
}

/**
 * A trigram index of the users' folded names and addresses (the text of a search is folded too). A search
 * asks it for the users that hold its text, at most a number of them: the index narrows the users by a few
 * trigrams (so that a lookup reads the entries of few trigrams, whatever the text), and where that is not
 * exact, each user it finds is checked against the whole text.
 */
export interface SearchIndex {
  /**
   * How to read the users whose folded names or address hold the folded text, at most `most` of them;
   * undefined when the index cannot narrow the text (too short). `read` runs a statement the index asks first,
   * to plan the lookup (SQLite asks how common the text's trigrams are).
   */
  matching(text: string, most: number, read: <R>(query: RawBuilder<R>) => Promise<readonly R[]>): Promise<IndexLookup | undefined>;
  /**
   * Users to read in order, before asking the index, for more than SEARCH_COUNT_REACH that hold the text
   * (0: none). An index that reads every entry of each trigram it is asked about (PostgreSQL's GIN: 20-50 ms
   * for a trigram every user holds) costs most for the text that most users hold, which is found sooner so.
   */
  readonly firstUsersFirst: number;
  /**
   * Whether a list by id takes the matches as a set (`id in`): SQLite reads such a set in id order and looks
   * users up only until the page is full. Otherwise the matches are all joined to the users and sorted (a
   * planner may walk the whole primary key testing each user against a set, as PostgreSQL's can).
   */
  readonly pagesByIdFromSet: boolean;
  /**
   * Where a search reads the index's matches once and keeps them: a page then reads users by id from the
   * kept set rather than looking them up in the index again (on SQLite, checking 10,000 users found by the
   * rarest trigrams took as long again for the page as for the count). `read` counts the matches and gives
   * them as one value, `set` is a subquery of the ids (`match_id`) in it.
   */
  readonly keptMatches?: {
    read(matches: RawBuilder<{ match_id: number }>): RawBuilder<{ n: number; kept: string }>;
    set(kept: string): RawBuilder<{ match_id: number }>;
    /**
     * Where `read` gives the ids in ascending order, a condition on `users.id` that holds for the given ids
     * alone: a list by id reads its matches a slice of kept ids per statement, along the primary key. The set
     * joined to the users led PostgreSQL's planner to walk the primary key from the page's start, testing
     * every user against the set; and the whole set, sent with each statement, cost more to read than its rows.
     */
    byId?(ids: readonly number[]): RawBuilder<SqlBool>;
  };
}

/** What the index found for a text. */
export interface IndexLookup {
  /** A subquery of the ids (`match_id`) of users that hold the text, at most the number asked for, in no particular order. */
  readonly matches: RawBuilder<{ match_id: number }>;
  /**
   * The users the index checks one by one against the text, at most `reach` of them, where it checks them.
   * If there are `reach` and the matches are no more than were asked for, they may be incomplete: the index
   * cannot answer within its bound.
   */
  readonly checked?: { readonly ids: RawBuilder<{ id: number }>; readonly reach: number };
}

/** How to open the store: its bounds, whom to tell when a connection fails, and when each query ends (tracing). */
export interface OpenOptions {
  /**
   * `apply` (the default) brings the schema up to date; `check` only checks that it is, and fails with a
   * StartFailure naming the migrations it lacks (MIGRATE_AT_START=false). Both fail on a schema that holds
   * migrations this version does not know.
   */
  readonly migrations?: 'apply' | 'check';
  /** Told the migrations a start applied, in order (none when the schema was up to date). */
  readonly onMigrated?: (names: readonly string[]) => void;
  readonly timeouts?: StoreTimeouts;
  readonly onConnectionFault?: ConnectionFault;
  readonly onQuery?: (event: QueryEvent) => void;
  /** Opened to write alone (a writer thread): no reader (Database.readNow), whose connection it would never use. */
  readonly writesOnly?: boolean;
}

/** Kysely's log hook, called as each query ends (in the async context of the request that ran it). */
function queryLog(onQuery: (event: QueryEvent) => void): KyselyConfig['log'] {
  return (event) => onQuery({ sql: event.query.sql, durationMs: event.queryDurationMillis, failed: event.level === 'error' });
}

interface DialectSupport {
  readonly dialect: Dialect;
  /** A dialect of its own for migrations, whose statements may take longer than requests' (undefined: `dialect`'s). */
  migrationDialect?(): Dialect;
  /**
   * Whether the migrations, the migration lock included, run in one transaction the service opens. Kysely
   * takes a session's advisory lock, then runs the migrations in a transaction, then unlocks: three
   * statements that a pooler in transaction mode may send through three server sessions, leaving the lock
   * held in one that other clients then get. Inside one transaction all of it is one server session, and
   * the lock is released before the commit. (SQLite's DDL is not transactional in Kysely's terms.)
   */
  readonly migratesInOneTransaction: boolean;
  readonly flavour: SqlFlavour;
  outage(error: unknown): string | undefined;
  /** Checks beyond `select 1` that tell whether writes would succeed. */
  checkRoom(): Promise<void>;
  /** How units of writes run: in a transaction each, or committed together. */
  writer(db: Kysely<Tables>): Write;
  /** Schema that holds Kysely's migration tables, when the dialect has schemas. */
  migrationSchema(db: Kysely<Tables>): Promise<string | undefined>;
  readonly sharedCounters: SharedCounts | undefined;
  /** The substring index, once the schema is migrated (PostgreSQL's exists only where pg_trgm could be had). */
  searchIndex(db: Kysely<Tables>): Promise<SearchIndex | undefined>;
  readonly searchConnections: number;
  /** Opens the store's reader (see Database.readNow), once the schema is migrated; undefined: none. */
  reader(): SqliteReader | undefined;
}

/**
 * How long a statement of a migration may take on PostgreSQL. Building an index over every user is one
 * statement (pg_trgm's took 9 s per 1,000,000 users here), far beyond a request's statement timeout; a
 * migration runs once, before the service listens.
 */
const MIGRATION_STATEMENT_MS = 30 * 60_000;

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
 * The trigger that re-indexes a user whose folded names or address an UPDATE sets, `when` it holds (SQLite
 * fires a trigger `of` columns whenever the UPDATE sets them, changed or not).
 */
const searchUpdateTrigger = (when: string) =>
  `create trigger users_search_update after update of first_name_key, last_name_key, email_key on users ${when} begin
       delete from users_search where rowid = old.id;
       insert into users_search (rowid, keys) values (new.id, ${searchedText('new.')}); end`;

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
    searchUpdateTrigger(''),
    `create trigger users_search_delete after delete on users begin delete from users_search where rowid = old.id; end`,
  ],
  drop: ['drop trigger users_search_insert', 'drop trigger users_search_update', 'drop trigger users_search_delete', 'drop table users_search'],
};

/**
 * Re-indexing only a user whose folded names or address changed: every PUT and PATCH sets all three (a PATCH
 * those it is given), and deleting and re-inserting a user's trigrams in FTS5 was most of what an unchanged
 * write cost (A/B side by side at 12 users, 50 connections: PUT 3,446 -> 4,324 req/s, PATCH 2,979 -> 4,035).
 */
export const SQLITE_REINDEX_ONLY_CHANGED = {
  create: [
    'drop trigger users_search_update',
    searchUpdateTrigger(
      'when old.first_name_key is not new.first_name_key or old.last_name_key is not new.last_name_key or old.email_key is not new.email_key',
    ),
  ],
  drop: ['drop trigger users_search_update', searchUpdateTrigger('')],
};

/**
 * Pages of the file each SQLite connection (the one that writes, and the reader, which searches) keeps in
 * memory, at most (KiB; negative in `cache_size`). SQLite's default, 2 MiB, holds little of a large store: at
 * 1,000,000 users, a search that checks 10,000 users found by its trigrams, each on a page of its own, read
 * them from the file each time (33 ms); with 64 MiB, 12 ms once read. The cache grows only as pages are read:
 * a small store's connections stay as small as before.
 */
const SQLITE_CACHE_KIB = 64 * 1024;

/** Answers of the SQLite reader kept until the store changes: at most this many, each of at most MAX_KEPT_ROWS rows. */
const MAX_KEPT_ANSWERS = 256;
const MAX_KEPT_ROWS = 100;

/** The SQLite reader: its selects, and the version they read. */
interface SqliteReader {
  readonly readNow: ReadNow;
  readonly readOnce: <Row>(query: CompiledQuery<Row>) => Row[];
  readonly storeVersion: () => number;
  close(): void;
}

/**
 * A read-only connection to an SQLite file, with its statements prepared once. Through Kysely a select by id
 * took a mutex, a connection and five awaits around the 3 µs SQLite spends on it, and waited behind any
 * write's transaction on the one connection writes share (bench/profile.mjs: 17% of a GET's CPU time).
 *
 * It keeps its answers until the store changes: a page of 6 read again cost 15 µs of SQLite (45 under
 * load); the check that nothing changed is one read of the WAL index's header, and sees any committed write
 * at once.
 */
function sqliteReader(filename: string, timeouts: StoreTimeouts): SqliteReader {
  const database = new SqliteDatabase(filename, { readonly: true, fileMustExist: true });
  database.pragma(`busy_timeout = ${timeouts.statementMs}`);
  // Searches read here: as much of the file kept in memory as the connection that writes keeps.
  database.pragma(`cache_size = -${SQLITE_CACHE_KIB}`);
  const statements = withStatementCache(database);
  // Changes whenever another connection commits, this process's writer or another process's: read before
  // each select, it says whether the answers kept since are still the store's. From the WAL index's header
  // where it is the one SQLite documents (sqlite/wal-index.ts: a pread, no lock); otherwise SQLite's own
  // (https://www.sqlite.org/pragma.html#pragma_data_version), which the first read also opens the index for.
  const dataVersion = database.prepare('pragma data_version').pluck();
  dataVersion.get();
  const walIndex = walIndexVersion(filename);
  const storeVersion = walIndex ? walIndex.read : () => dataVersion.get() as number;
  let version: unknown;
  const answers = new Map<string, readonly unknown[]>();
  const readOnce = <Row>({ sql: text, parameters }: CompiledQuery<Row>): Row[] => statements.prepare(text).all(parameters) as Row[];
  return {
    readNow: <Row>(query: CompiledQuery<Row> | Keyed<Row>): Row[] => {
      const now = storeVersion();
      if (now !== version) {
        answers.clear();
        version = now;
      }
      const key = 'key' in query ? query.key : `${query.sql}\u0000${JSON.stringify(query.parameters)}`;
      let rows = answers.get(key) as readonly Row[] | undefined;
      if (rows === undefined) {
        rows = readOnce('key' in query ? query.compile() : query);
        if (rows.length <= MAX_KEPT_ROWS) {
          for (const row of rows) Object.freeze(row);
          answers.set(key, rows);
          if (answers.size > MAX_KEPT_ANSWERS) answers.delete(answers.keys().next().value!);
        }
      }
      // A copy: callers may consume the array (a list's slices are popped as they are sent).
      return rows.slice();
    },
    readOnce,
    storeVersion,
    close: () => {
      walIndex?.close();
      database.close();
    },
  };
}

function sqlite(filename: string, timeouts: StoreTimeouts): DialectSupport {
  if (filename !== ':memory:') mkdirSync(dirname(filename), { recursive: true });
  const database = new SqliteDatabase(filename);
  // WAL lets readers run beside the writer; FULL syncs the log on every commit, so an acknowledged write
  // survives a power loss as well as a crash (https://www.sqlite.org/pragma.html#pragma_synchronous).
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = FULL');
  database.pragma(`busy_timeout = ${timeouts.statementMs}`);
  database.pragma(`cache_size = -${SQLITE_CACHE_KIB}`);
  return {
    dialect: new MultiProcessSqliteDialect({ database: withStatementCache(database) }, database),
    migratesInOneTransaction: false,
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
      reindexOnlyChanged: SQLITE_REINDEX_ONLY_CHANGED,
      optionalSubstringIndex: { create: async () => {}, drop: async () => {} },
      searchFunction: { create: [], drop: [] },
    },
    searchIndex: async () => sqliteSearchIndex,
    searchConnections: Infinity,
    reader: () => (filename === ':memory:' ? undefined : sqliteReader(filename, timeouts)),
    outage: sqliteOutage,
    checkRoom: () => checkFreeSpace(filename),
    // One connection and an fsync per commit: concurrent writes share commits (see sqlite/group-commit.ts).
    writer: (db) => groupCommit(db, { lockWaitMs: timeouts.statementMs }),
    migrationSchema: async () => undefined,
    sharedCounters: undefined,
  };
}

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

function postgres(url: string, poolSize: number, poolMode: PoolMode, timeouts: StoreTimeouts, onFault: ConnectionFault): DialectSupport {
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

function dialectSupport(config: DatabaseConfig, { timeouts = DEFAULT_TIMEOUTS, onConnectionFault = () => {} }: OpenOptions): DialectSupport {
  return config.kind === 'sqlite'
    ? sqlite(config.filename, timeouts)
    : postgres(config.url, config.poolSize, config.poolMode, timeouts, onConnectionFault);
}

/**
 * The outage code of an error opening the store (openDatabase wraps what the store threw), as `outage`
 * classifies requests' errors: the store is down, refuses, is starting or locked; undefined for anything else.
 */
export function openingOutage(config: DatabaseConfig, error: unknown): string | undefined {
  // A pooler that refuses the session's settings refuses them every time: no use waiting.
  if (refusedStartupParameter(error) !== undefined) return undefined;
  const cause = error instanceof Error && error.cause !== undefined ? error.cause : error;
  return config.kind === 'postgres' ? postgresOutage(cause) : sqliteOutage(cause);
}

/**
 * The migrations this version has that the store's schema lacks. Throws a StartFailure when the schema holds
 * migrations this version does not know: a newer version migrated it, and this one would misread its tables.
 */
async function pendingMigrations(db: Kysely<Tables>): Promise<string[]> {
  let applied: string[];
  try {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
    applied = rows.map((row) => row.name);
  } catch (error) {
    // A new store: Kysely's bookkeeping table is made by the first migration run. Anything else is an error.
    if (!/kysely_migration" does not exist|no such table: kysely_migration/.test((error as Error).message)) throw error;
    applied = [];
  }
  const unknown = applied.filter((name) => !MIGRATION_NAMES.includes(name)).sort();
  if (unknown.length > 0) {
    throw new StartFailure(
      `Could not start: the store's schema is newer than this version of the service (it has migration${unknown.length === 1 ? '' : 's'} ${unknown.join(', ')}, which this version does not know). Run a version at least as new as the one that migrated it.`,
    );
  }
  return MIGRATION_NAMES.filter((name) => !applied.includes(name));
}

/** The transaction lock PostgreSQL's migrations run under (any number; "user-records" in ASCII). */
const MIGRATION_LOCK = 0x7573657273n;

/** Opens the database named by the configuration and brings its schema up to date. */
export async function openDatabase(config: DatabaseConfig, options: OpenOptions = {}): Promise<Database> {
  const support = dialectSupport(config, options);
  const db = new Kysely<Tables>({ dialect: support.dialect, ...(options.onQuery ? { log: queryLog(options.onQuery) } : {}) });
  let searchIndex: SearchIndex | undefined;
  try {
    const migrating = support.migrationDialect ? new Kysely<Tables>({ dialect: support.migrationDialect() }) : db;
    try {
      const migrationTableSchema = await support.migrationSchema(migrating);
      const provider = migrationProvider(support.flavour);
      const pending = await pendingMigrations(migrating);
      const migrate = async (on: Kysely<Tables>) => {
        const { error, results } = await new Migrator({ db: on, provider, ...(migrationTableSchema ? { migrationTableSchema } : {}) }).migrateToLatest();
        if (error) throw error;
        options.onMigrated?.((results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName));
      };
      if (options.migrations === 'check') {
        if (pending.length > 0) {
          throw new StartFailure(
            `Could not start: the store's schema lacks ${pending.length} migration${pending.length === 1 ? '' : 's'} this version needs (${pending.join(', ')}). Run npm run migrate with this version first, or start with MIGRATE_AT_START=true.`,
          );
        }
      } else if (support.migratesInOneTransaction) {
        await migrating.transaction().execute(async (transaction) => {
          // Before Kysely checks for its tables: instances that start together would otherwise create them at
          // once, and the loser's error, which Kysely expects and checks, aborts this transaction.
          await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK})`.execute(transaction);
          await migrate(transaction);
        });
      } else {
        await migrate(migrating);
      }
    } finally {
      if (migrating !== db) await migrating.destroy();
    }
    searchIndex = await support.searchIndex(db);
  } catch (error) {
    await db.destroy();
    if (error instanceof StartFailure) throw error;
    throw new Error(`Could not prepare the database: ${(error as Error).message}`, { cause: error });
  }
  const probe = async () => {
    await sql`select 1`.execute(db);
    await support.checkRoom();
  };
  const { sharedCounters, searchConnections } = support;
  // Traced queries go through Kysely, whose log makes their spans; a writer thread reads through no reader.
  const reader = options.onQuery || options.writesOnly ? undefined : support.reader();
  const close = async () => {
    reader?.close();
    await db.destroy();
  };
  return { kind: config.kind, db, write: support.writer(db), outage: support.outage, probe, sharedCounters, searchIndex, searchConnections, readNow: reader?.readNow, readOnce: reader?.readOnce, storeVersion: reader?.storeVersion, close };
}
