import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';

// Online backup and restore of a SQLite store (npm run backup / npm run restore). PostgreSQL's are pg_dump
// and pg_restore (docs/deployment.md).

/** A backup or restore that cannot be made; its message is the line to show. */
export class BackupFailure extends Error {
  override readonly name = 'BackupFailure';
}

/** What a backup holds, as checked by reading it back. */
export interface BackupSummary {
  readonly users: number;
  readonly migrations: number;
}

/** Opens `file` read-only and checks that it is a whole store of this service: integrity, users, migrations. */
function checkStore(file: string): BackupSummary {
  let database: SqliteDatabase.Database;
  try {
    database = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new BackupFailure(`${file} cannot be opened as a SQLite database: ${(error as Error).message}`);
  }
  try {
    const integrity = database.pragma('integrity_check', { simple: true });
    if (integrity !== 'ok') throw new BackupFailure(`${file} fails SQLite's integrity check: ${String(integrity)}`);
    const tables = new Set(database.prepare(`select name from sqlite_master where type = 'table'`).pluck().all() as string[]);
    if (!tables.has('users') || !tables.has('kysely_migration'))
      throw new BackupFailure(`${file} is not a store of this service (it has no users or kysely_migration table)`);
    return {
      users: database.prepare('select count(*) from users').pluck().get() as number,
      migrations: database.prepare('select count(*) from kysely_migration').pluck().get() as number,
    };
  } catch (error) {
    if (error instanceof BackupFailure) throw error;
    throw new BackupFailure(`${file} cannot be read as a store: ${(error as Error).message}`);
  } finally {
    database.close();
  }
}

/** Writes `file` and its folder to disk. */
function sync(file: string): void {
  for (const path of [file, dirname(file)]) {
    const fd = openSync(path, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
}

/**
 * Copies the store `filename` to `destination` while the service runs and writes: VACUUM INTO reads one
 * snapshot (a read transaction, which in WAL mode holds up no writer) and writes it compacted. Every write
 * committed before the backup began is in it. Written under a temporary name, synced, then renamed, so a
 * backup that stops half way never stands under the name asked for; an existing file is never overwritten.
 */
export function backupSqlite(filename: string, destination: string): BackupSummary {
  if (existsSync(destination)) throw new BackupFailure(`${destination} exists: name a new file (a backup never overwrites one)`);
  if (!existsSync(filename)) throw new BackupFailure(`${filename} does not exist: DATABASE_URL names no store here`);
  const partial = `${destination}.partial`;
  rmSync(partial, { force: true });
  const source = new SqliteDatabase(filename, { readonly: true, fileMustExist: true });
  try {
    source.pragma('busy_timeout = 5000');
    source.prepare('vacuum into ?').run(partial);
  } catch (error) {
    rmSync(partial, { force: true });
    throw new BackupFailure(`could not back up ${filename}: ${(error as Error).message}`);
  } finally {
    source.close();
  }
  sync(partial);
  renameSync(partial, destination);
  sync(destination);
  return checkStore(destination);
}

/**
 * Replaces the store `filename` with the backup `backup`, after checking the backup is a whole store of this
 * service. SQLite's backup API writes it into the store through SQLite's own locking (the store's WAL
 * included). The service must be stopped meanwhile: it would keep what it had read before.
 */
export async function restoreSqlite(backup: string, filename: string): Promise<BackupSummary> {
  const summary = checkStore(backup);
  const source = new SqliteDatabase(backup, { readonly: true, fileMustExist: true });
  try {
    await source.backup(filename);
  } catch (error) {
    throw new BackupFailure(`could not restore into ${filename}: ${(error as Error).message}`);
  } finally {
    source.close();
  }
  return summary;
}
