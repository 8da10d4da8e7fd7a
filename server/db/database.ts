import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import type { DatabaseConfig } from '../config.js';
import { migrationProvider } from './migrations/index.js';
import type { Tables } from './tables.js';

// The only module that names a SQL dialect.

/** An open database with its schema migrated, and a way to tell outages from bugs. */
export interface Database {
  readonly db: Kysely<Tables>;
  /** True for errors that mean the store cannot answer now (locked, I/O, closed), not that the query is wrong. */
  isUnavailable(error: unknown): boolean;
  close(): Promise<void>;
}

const SQLITE_OUTAGE_CODES = /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|READONLY|CORRUPT|NOTADB|PROTOCOL)/;

function isSqliteOutage(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && SQLITE_OUTAGE_CODES.test(code)) return true;
  // better-sqlite3 and Kysely after close(): the connection is gone rather than the query wrong.
  return /database connection is not open|driver has already been destroyed/.test(error.message);
}

function openSqlite(filename: string): SqliteDatabase.Database {
  if (filename !== ':memory:') mkdirSync(dirname(filename), { recursive: true });
  const sqlite = new SqliteDatabase(filename);
  // WAL lets readers run beside the writer; FULL syncs the log on every commit, so an acknowledged write
  // survives a power loss as well as a crash (https://www.sqlite.org/pragma.html#pragma_synchronous).
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('busy_timeout = 5000');
  return sqlite;
}

/** Opens the database named by the configuration and brings its schema up to date. */
export async function openDatabase(config: DatabaseConfig): Promise<Database> {
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: openSqlite(config.filename) }) });
  try {
    const { error } = await new Migrator({ db, provider: migrationProvider }).migrateToLatest();
    if (error) throw error;
  } catch (error) {
    await db.destroy();
    throw new Error(`Could not migrate the database: ${(error as Error).message}`, { cause: error });
  }
  return { db, isUnavailable: isSqliteOutage, close: () => db.destroy() };
}
