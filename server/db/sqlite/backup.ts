import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';

// Online backup of a SQLite store (npm run backup), and the checks a backup passes; restore.ts puts one back.
// PostgreSQL's are pg_dump and pg_restore (docs/deployment.md).

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
export function checkStore(file: string): BackupSummary {
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

/** Writes a file, or a folder's list of names, to disk. */
function syncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Writes to disk the folder that holds `file`: a name made, renamed or removed there survives a power loss. */
export const syncFolder = (file: string) => syncPath(dirname(file));

/**
 * Copies the store `filename` to `destination` while the service runs and writes: VACUUM INTO reads one
 * snapshot (a read transaction, which in WAL mode holds up no writer) and writes it compacted. Every write
 * committed before the backup began is in it. Written under a temporary name made for this backup alone,
 * synced, then renamed, so a backup that stops half way never stands under the name asked for; an existing file
 * is never overwritten. The backup holds personal data: its folder is made for its owner, and it is readable by
 * its owner only.
 */
export function backupSqlite(filename: string, destination: string): BackupSummary {
  if (existsSync(destination)) throw new BackupFailure(`${destination} exists: name a new file (a backup never overwrites one)`);
  if (!existsSync(filename)) throw new BackupFailure(`${filename} does not exist: DATABASE_URL names no store here`);
  try {
    mkdirSync(dirname(destination), { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new BackupFailure(`cannot make the folder ${dirname(destination)}: ${(error as Error).message}`);
  }
  const partial = `${destination}.partial`;
  try {
    // VACUUM INTO writes into an empty file as into a new one, and keeps its mode.
    closeSync(openSync(partial, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new BackupFailure(
        `${partial} exists: a backup to ${destination} is under way, or one stopped half way. If none runs, remove it and back up again.`,
      );
    throw new BackupFailure(`cannot write ${partial}: ${(error as Error).message}`);
  }
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
  syncPath(partial);
  renameSync(partial, destination);
  syncFolder(destination);
  return checkStore(destination);
}
