import { mkdirSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import type { StoreTimeouts } from '../../config.js';
import type { DialectSupport } from '../dialect-support.js';
import { sqliteOutage, StoreFault } from '../outage.js';
import { MultiProcessSqliteDialect, withStatementCache } from './dialect.js';
import { groupCommit } from './group-commit.js';
import { sqliteReader } from './reader.js';
import { sqliteSearchIndex } from './search-index.js';

// An SQLite file as the service's store: its pragmas, its schema's SQL, its writer and its reader.

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

export function sqlite(filename: string, timeouts: StoreTimeouts): DialectSupport {
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
    reader: () => (filename === ':memory:' ? undefined : sqliteReader(filename, timeouts, SQLITE_CACHE_KIB)),
    outage: sqliteOutage,
    checkRoom: () => checkFreeSpace(filename),
    // One connection and an fsync per commit: concurrent writes share commits (see group-commit.ts).
    writer: (db) => groupCommit(db, { lockWaitMs: timeouts.statementMs }),
    migrationSchema: async () => undefined,
    sharedCounters: undefined,
  };
}
