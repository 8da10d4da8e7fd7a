import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import { openDatabase, type Database } from '../../server/db/database.js';
import { MAX_UNITS_PER_COMMIT } from '../../server/db/sqlite/group-commit.js';
import type { Tables } from '../../server/db/tables.js';
import { newUserRow } from '../../server/db/sql-user-repository.js';

// Group commit on SQLite, watched from a second connection to the same file: that connection sees only
// what has been committed, so it tells when each write became durable.

let dir: string;
let database: Database;
let observer: SqliteDatabase.Database;
const committedUsers = () => (observer.prepare('select count(*) as n from users').get() as { n: number }).n;

const insertUser = (trx: Kysely<Tables>, name: string) =>
  trx
    .insertInto('users')
    .values(newUserRow({ firstName: name, lastName: 'Batch', email: `${name}@example.com` }, 'now'))
    .returning('id')
    .executeTakeFirstOrThrow();

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'group-commit-'));
  database = await openDatabase({ kind: 'sqlite', filename: join(dir, 'users.sqlite') });
  observer = new SqliteDatabase(join(dir, 'users.sqlite'));
});

afterEach(async () => {
  observer.close();
  await database.close();
  rmSync(dir, { recursive: true, force: true });
});

test('writes that arrive together share one commit, and none is acknowledged before it', async () => {
  const seenByOthers: number[] = [];
  const writes = Array.from({ length: 20 }, (_, i) =>
    database.write(async (trx) => {
      await insertUser(trx, `user${i}`);
      seenByOthers.push(committedUsers());
    }),
  );
  const acknowledged = writes.map((write) => write.then(() => committedUsers()));
  expect(await Promise.all(acknowledged)).toEqual(Array(20).fill(20));
  // Committed one by one, the later writes would have seen the earlier ones.
  expect(seenByOthers).toEqual(Array(20).fill(0));
});

test('a unit that fails is rolled back alone; the others in its commit are kept', async () => {
  const results = await Promise.allSettled([
    database.write((trx) => insertUser(trx, 'first')),
    database.write(async (trx) => {
      await insertUser(trx, 'failing');
      throw new Error('this unit changes its mind');
    }),
    database.write((trx) => insertUser(trx, 'third')),
  ]);
  expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  expect((results[1] as PromiseRejectedResult).reason.message).toBe('this unit changes its mind');
  expect(observer.prepare('select first_name from users order by id').pluck().all()).toEqual(['first', 'third']);
});

test('when the commit itself fails, every unit in it fails and nothing is stored', async () => {
  // A deferred foreign key is checked at COMMIT: a real way to make a commit fail.
  observer.exec('create table parent (id integer primary key); create table child (parent_id integer references parent (id) deferrable initially deferred)');
  const results = await Promise.allSettled([
    database.write((trx) => insertUser(trx, 'innocent')),
    database.write(async (trx) => {
      await sql`insert into child (parent_id) values (999)`.execute(trx);
    }),
  ]);
  expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
  expect((results[0] as PromiseRejectedResult).reason.code).toBe('SQLITE_CONSTRAINT_FOREIGNKEY');
  expect(committedUsers()).toBe(0);
  // The store is usable again at once.
  await database.write((trx) => insertUser(trx, 'after'));
  expect(committedUsers()).toBe(1);
});

test(`more than ${MAX_UNITS_PER_COMMIT} writes at once take more than one commit`, async () => {
  const seenByOthers: number[] = [];
  const writes = Array.from({ length: MAX_UNITS_PER_COMMIT + 10 }, (_, i) =>
    database.write(async (trx) => {
      await insertUser(trx, `user${i}`);
      seenByOthers.push(committedUsers());
    }),
  );
  await Promise.all(writes);
  expect(committedUsers()).toBe(MAX_UNITS_PER_COMMIT + 10);
  expect(seenByOthers.slice(0, MAX_UNITS_PER_COMMIT)).toEqual(Array(MAX_UNITS_PER_COMMIT).fill(0));
  expect(seenByOthers.slice(MAX_UNITS_PER_COMMIT)).toEqual(Array(10).fill(MAX_UNITS_PER_COMMIT));
});
