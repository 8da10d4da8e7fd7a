import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { DEFAULT_TIMEOUTS } from '../database.js';
import { MIGRATION_NAMES, migrationProvider } from '../migrations/index.js';
import type { Tables } from '../tables.js';
import { BackupFailure, type BackupSummary, checkStore, syncFolder } from './backup.js';
import { type Marker, restoreMarker } from './restore-marker.js';
import { sqlite } from './store.js';

// `npm run restore`: puts a backup of a SQLite store back in its place. Safe by construction: it refuses a
// store another process holds open, refuses a backup whose schema is not exactly what the migrations make,
// keeps every id the store ever handed out from being handed out again, and leaves a marker until it is whole,
// so that neither the service nor a second restore starts on a store that is half restored.

/** One object of a schema as sqlite_master lists it. */
interface SchemaObject {
  readonly type: string;
  readonly name: string;
  readonly sql: string | null;
}

/** A schema's objects, SQLite's own (sqlite_sequence, sqlite_stat1, automatic indexes) left out, one string each. */
const describeSchema = (objects: readonly SchemaObject[]) =>
  objects
    .filter(({ name }) => !name.startsWith('sqlite_'))
    .map(({ type, name, sql }) => `${type} ${name}: ${sql ?? ''}`)
    .sort();

/** The schema this version's migrations make, up to and including `lastMigration`, on a store of its own in memory. */
async function migratedSchema(lastMigration: string): Promise<string[]> {
  const support = sqlite(':memory:', DEFAULT_TIMEOUTS);
  const db = new Kysely<Tables>({ dialect: support.dialect });
  try {
    const { error } = await new Migrator({ db, provider: migrationProvider('sqlite') }).migrateTo(lastMigration);
    if (error) throw error;
    const { rows } = await sql<SchemaObject>`select type, name, sql from sqlite_master`.execute(db);
    return describeSchema(rows);
  } finally {
    await db.destroy();
  }
}

/**
 * Checks that `backup` holds exactly what this version's migrations make, up to the last it records: nothing
 * added (a trigger or view someone put there), nothing missing, nothing changed.
 */
async function checkSchema(backup: string): Promise<void> {
  const database = new SqliteDatabase(backup, { readonly: true, fileMustExist: true });
  let applied: string[];
  let objects: SchemaObject[];
  try {
    applied = database.prepare('select name from kysely_migration order by name').pluck().all() as string[];
    objects = database.prepare('select type, name, sql from sqlite_master').all() as SchemaObject[];
  } finally {
    database.close();
  }
  const known = MIGRATION_NAMES.slice(0, applied.length);
  if (applied.length === 0 || applied.some((name, i) => name !== known[i]))
    throw new BackupFailure(
      `${backup} records migrations this version does not know or lacks earlier ones (${applied.join(', ') || 'none'}): restore it with the version that made it`,
    );
  const expected = await migratedSchema(applied.at(-1)!);
  const actual = describeSchema(objects);
  const added = actual.filter((object) => !expected.includes(object));
  const missing = expected.filter((object) => !actual.includes(object));
  if (added.length > 0 || missing.length > 0) {
    const said = [...added.map((o) => `has ${o.split(':')[0]}`), ...missing.map((o) => `lacks ${o.split(':')[0]}`)];
    throw new BackupFailure(`${backup} holds a schema the migrations do not make (it ${said.join(', ')}): a store it is not, or one changed by hand`);
  }
}

/**
 * Takes the store for the restore: refuses it when another process holds it open (a running service, a backup,
 * a migration), and returns the highest id it handed out (`readIds`; 0 otherwise: a store half restored is
 * not read). An exclusive lock is granted only while no other connection has the store open, as every
 * connection in WAL mode holds a shared lock for as long as it is open.
 */
function takeStore(filename: string, readIds: boolean): number {
  if (!existsSync(filename)) return 0;
  const database = new SqliteDatabase(filename, { fileMustExist: true });
  try {
    database.pragma('busy_timeout = 0');
    database.pragma('locking_mode = EXCLUSIVE');
    try {
      database.exec('begin exclusive');
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
      throw new BackupFailure(
        `${filename} is open in another process (a running service, a backup or a migration): stop it first. A service left running would keep what it read before the restore and hand out ids the backup already holds.`,
      );
    }
    if (!readIds) {
      database.exec('rollback');
      return 0;
    }
    const tables = new Set(database.prepare(`select name from sqlite_master where type = 'table'`).pluck().all() as string[]);
    const handedOut = tables.has('sqlite_sequence')
      ? (database.prepare(`select seq from sqlite_sequence where name = 'users'`).pluck().get() as number | undefined)
      : 0;
    const stored = tables.has('users') ? (database.prepare('select max(id) from users').pluck().get() as number | null) : 0;
    database.exec('rollback');
    return Math.max(handedOut ?? 0, stored ?? 0);
  } finally {
    database.close();
  }
}

/** Writes the marker, made for this restore alone (`wx`) and readable by its owner only, and syncs it. */
function writeMarker(path: string, marker: Marker, flag: 'wx' | 'w'): void {
  const fd = openSync(path, flag, 0o600);
  try {
    writeSync(fd, `${JSON.stringify(marker)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  syncFolder(path);
}

/** The marker of an earlier restore into the store, or undefined when there is none. */
function earlierRestore(path: string): Marker | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const marker = JSON.parse(readFileSync(path, 'utf8')) as Marker;
    if (typeof marker.backup === 'string' && Number.isSafeInteger(marker.highestId)) return marker;
  } catch {}
  throw new BackupFailure(`${path} is not a restore's marker: if no restore runs, move it away and restore again`);
}

/**
 * Replaces the store `filename` with the backup `backup`. The backup is checked first (integrity, and a schema
 * the migrations make); the store is taken only while no other process holds it. SQLite's backup API writes the
 * backup into the store through SQLite's own locking (the store's WAL included); then the store's next id is set
 * past every id it had handed out (or `nextId - 1`, when that is higher: for a store that was lost), so no id
 * names two users. A restore that stops half way leaves its marker: the service refuses to start, and running
 * the same restore again finishes it.
 */
export async function restoreSqlite(backup: string, filename: string, nextId = 1): Promise<BackupSummary & { readonly nextId: number }> {
  const summary = checkStore(backup);
  await checkSchema(backup);
  const path = restoreMarker(filename);
  mkdirSync(dirname(filename), { recursive: true });
  const earlier = earlierRestore(path);
  if (earlier && earlier.backup !== resolve(backup))
    throw new BackupFailure(
      `a restore of ${earlier.backup} into ${filename} has not finished (${path}): run it again with that backup, or, to restore another, first finish that one`,
    );
  let highestId: number;
  if (earlier) {
    takeStore(filename, false);
    highestId = Math.max(earlier.highestId, nextId - 1);
  } else {
    // The marker first: a service that opens the store after this sees it and refuses to start; one that
    // opened it before holds it, and takeStore refuses.
    writeMarker(path, { backup: resolve(backup), highestId: 0 }, 'wx');
    try {
      highestId = Math.max(takeStore(filename, true), nextId - 1);
    } catch (error) {
      rmSync(path, { force: true });
      throw error;
    }
    writeMarker(path, { backup: resolve(backup), highestId }, 'w');
  }
  const source = new SqliteDatabase(backup, { readonly: true, fileMustExist: true });
  try {
    await source.backup(filename);
  } catch (error) {
    throw new BackupFailure(`could not restore into ${filename}: ${(error as Error).message}. Run the restore again to finish it.`);
  } finally {
    source.close();
  }
  const store = new SqliteDatabase(filename, { fileMustExist: true });
  let restoredNextId: number;
  try {
    store.pragma('synchronous = FULL');
    store.prepare(`update sqlite_sequence set seq = max(seq, ?) where name = 'users'`).run(highestId);
    if (store.prepare(`select count(*) from sqlite_sequence where name = 'users'`).pluck().get() === 0)
      store.prepare(`insert into sqlite_sequence (name, seq) values ('users', ?)`).run(highestId);
    restoredNextId = (store.prepare(`select seq from sqlite_sequence where name = 'users'`).pluck().get() as number) + 1;
  } finally {
    store.close();
  }
  rmSync(path);
  syncFolder(path);
  return { ...summary, nextId: restoredNextId };
}
