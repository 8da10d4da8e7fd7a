import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { walIndexVersion, type WalIndexVersion } from '../../server/db/sqlite/wal-index.js';

// The store's version read from SQLite's WAL index (server/db/sqlite/wal-index.ts), against real SQLite files: every
// commit, by a connection of this process or of another, must change it, and nothing else should.

let dir: string;
let file: string;
let writer: SqliteDatabase.Database;
let reader: SqliteDatabase.Database;
let index: WalIndexVersion | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'wal-index-'));
  file = join(dir, 'users.sqlite');
  writer = new SqliteDatabase(file);
  writer.pragma('journal_mode = WAL');
  writer.exec('create table users (id integer primary key, name text)');
  reader = new SqliteDatabase(file, { readonly: true });
  reader.prepare('select count(*) from users').get();
  index = walIndexVersion(file);
});

afterEach(() => {
  index?.close();
  reader.close();
  writer.close();
  rmSync(dir, { recursive: true, force: true });
});

test('every commit of another connection of this process is a new version, each time', () => {
  const insert = writer.prepare('insert into users (name) values (?)');
  const seen = [index!.read()];
  for (let i = 0; i < 20; i++) {
    insert.run(`user ${i}`);
    seen.push(index!.read());
  }
  expect(new Set(seen).size).toBe(seen.length);
  // An update in place (no new page) and a delete are commits too.
  const before = index!.read();
  writer.prepare('update users set name = ? where id = 1').run('renamed');
  const updated = index!.read();
  writer.prepare('delete from users where id = 2').run();
  expect(new Set([before, updated, index!.read()]).size).toBe(3);
});

test('a commit of another process is a new version', () => {
  const before = index!.read();
  execFileSync(process.execPath, [
    '-e',
    `const D = require('better-sqlite3'); new D(${JSON.stringify(file)}).prepare("insert into users (name) values ('elsewhere')").run()`,
  ]);
  expect(index!.read()).not.toBe(before);
});

test('reads, an empty transaction and a checkpoint that copies what is committed are not', () => {
  writer.prepare('insert into users (name) values (?)').run('someone');
  const before = index!.read();
  // Readers take read marks in the index (the bytes after the header): not a change of the store.
  for (let i = 0; i < 5; i++) {
    reader.prepare('select * from users').all();
    const other = new SqliteDatabase(file, { readonly: true });
    other.prepare('select count(*) from users').get();
    other.close();
  }
  writer.exec('begin immediate; commit');
  writer.pragma('wal_checkpoint(PASSIVE)');
  expect(index!.read()).toBe(before);
  expect(index!.read()).toBe(before);
});

test('a database reached through a symbolic link is read from the index SQLite keeps beside its file', () => {
  const link = join(dir, 'link.sqlite');
  symlinkSync(file, link);
  const linked = walIndexVersion(link)!;
  try {
    const before = linked.read();
    writer.prepare('insert into users (name) values (?)').run('through a link');
    expect(linked.read()).not.toBe(before);
  } finally {
    linked.close();
  }
});

test('without the index SQLite documents, there is no version to read: the caller asks SQLite', () => {
  // Not in WAL mode: no index at all.
  const rollback = join(dir, 'rollback.sqlite');
  const database = new SqliteDatabase(rollback);
  database.exec('create table t (a)');
  expect(walIndexVersion(rollback)).toBeUndefined();
  // A file by that name that is not an index of the documented format (another SQLite, another VFS).
  writeFileSync(`${rollback}-shm`, Buffer.alloc(32 * 1024, 7));
  expect(walIndexVersion(rollback)).toBeUndefined();
  database.close();
  expect(walIndexVersion(join(dir, 'missing.sqlite'))).toBeUndefined();
});

test('once closed, reading is refused as an outage, and closing again does nothing', () => {
  index!.close();
  index!.close();
  expect(() => index!.read()).toThrow(expect.objectContaining({ code: 'STORE_CLOSED' }));
  index = undefined;
});
