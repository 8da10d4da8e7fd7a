import { mkdirSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import type { StoreTimeouts } from '../../config.js';
import type { DialectSupport } from '../dialect-support.js';
import { sqliteOutage, StoreFault } from '../outage.js';
import { MultiProcessSqliteDialect, withStatementCache } from './dialect.js';
import { groupCommit } from './group-commit.js';
import { refuseUnfinishedRestore } from './restore-marker.js';
import { sqliteReader } from './reader.js';
import { sqliteSearchIndex } from './search-index.js';

// An SQLite file as the service's store: its pragmas, its writer and its reader.

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
 * Pages of the file each SQLite connection (the one that writes, and the reader, which searches) keeps in
 * memory, at most (KiB; negative in `cache_size`). SQLite's default, 2 MiB, holds little of a large store: a
 * search that checks thousands of users found by its trigrams, each on a page of its own, would read them from
 * the file each time. The cache grows only as pages are read: a small store's connections stay small.
 */
const SQLITE_CACHE_KIB = 64 * 1024;

export function sqlite(filename: string, timeouts: StoreTimeouts): DialectSupport {
  if (filename !== ':memory:') mkdirSync(dirname(filename), { recursive: true });
  const database = new SqliteDatabase(filename);
  // WAL lets readers run beside the writer; FULL syncs the log on every commit, so an acknowledged write
  // survives a power loss as well as a crash (https://www.sqlite.org/pragma.html#pragma_synchronous).
  database.pragma('journal_mode = WAL');
  // Now that this connection holds the store (every open connection in WAL mode does), a restore that begins
  // refuses it; one that began earlier has left its marker.
  if (filename !== ':memory:') {
    try {
      refuseUnfinishedRestore(filename);
    } catch (error) {
      database.close();
      throw error;
    }
  }
  database.pragma('synchronous = FULL');
  database.pragma(`busy_timeout = ${timeouts.statementMs}`);
  database.pragma(`cache_size = -${SQLITE_CACHE_KIB}`);
  return {
    dialect: new MultiProcessSqliteDialect({ database: withStatementCache(database) }, database),
    migratesInOneTransaction: false,
    kind: 'sqlite',
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
