import { sql, type Compilable, type CompiledQuery, type Insertable, type Kysely } from 'kysely';
import { byIdOnly, foldCase, unfiltered, type UserFilter } from '../domain/user-query.js';
import type { ChangeResult, UserRepository, VersionCondition } from '../domain/user-repository.js';
import { nextTurn } from '../domain/next-turn.js';
import type { ListedUser, Tally, User, UserFields } from '../domain/user.js';
import type { Database } from './database.js';
import { createIdempotencyKeyQueries } from './idempotency-key.queries.js';
import { createStoreGuard } from './store-guard.js';
import type { Tables, UserRow, UsersTable } from './tables.js';
import { LISTED_COLUMNS, toListedUser, type ListedRow } from './list-sql.js';
import { createUserLists, type ListOptions } from './user-lists.js';

/**
 * The columns a user is read from, by name: never `*`, so that a store whose columns are not the ones the
 * migrations made (renamed, dropped) fails the query (a 500, logged) instead of answering a user without one.
 */
const USER_COLUMNS = ['id', 'first_name', 'last_name', 'email', 'created_at', 'updated_at', 'version'] as const;
type StoredUser = Pick<UserRow, (typeof USER_COLUMNS)[number]>;

/** Each value an UPDATE of changeUser binds: a field given (or its folded copy), the time, the id, a version. */
type ChangeValue = { readonly field: keyof UserFields; readonly folded?: true } | 'now' | 'id' | { readonly version: number };
/** An UPDATE of changeUser compiled, with the value each of its parameters binds, in order. */
interface CompiledChange {
  readonly compiled: CompiledQuery<StoredUser>;
  readonly values: readonly ChangeValue[];
}
/** Most shapes of change kept compiled; one past them is compiled for its own use. */
const MAX_COMPILED_CHANGES = 64;

/** Maps a stored row to the domain record: the one place that knows the column names. */
export function toUser(row: StoredUser): User {
  return {
    id: row.id,
    firstName: row.first_name,
    lastName: row.last_name,
    email: row.email,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: row.version,
  };
}

/**
 * The columns of the fields given, each with its folded copy that lists search and sort by; a field left out
 * is left out here too (a merge patch keeps it as stored).
 */
const toColumns = (fields: Partial<UserFields>) => ({
  ...(fields.firstName !== undefined ? { first_name: fields.firstName, first_name_key: foldCase(fields.firstName) } : {}),
  ...(fields.lastName !== undefined ? { last_name: fields.lastName, last_name_key: foldCase(fields.lastName) } : {}),
  ...(fields.email !== undefined ? { email: fields.email, email_key: foldCase(fields.email) } : {}),
});

/** The column of each field, as stored (not folded). */
const FIELD_COLUMNS = { firstName: 'first_name', lastName: 'last_name', email: 'email' } as const satisfies Record<keyof UserFields, keyof UsersTable>;
/** The fields of a user, in the order the UPDATE of a change compares them. */
const FIELDS = Object.keys(FIELD_COLUMNS) as (keyof UserFields)[];

/** Every column a new user is stored with. */
export const newUserRow = (fields: UserFields, now: string) => ({ ...toColumns(fields), created_at: now, updated_at: now }) as Insertable<UsersTable>;

/**
 * A query built and compiled once, then run with fresh parameter values, given in the order the query binds
 * them. On the hot paths building a Kysely query costs more than SQLite takes to run it.
 */
function compiledOnce<Row>(query: Compilable<Row>) {
  const compiled = query.compile();
  return async (db: Kysely<Tables>, ...parameters: unknown[]): Promise<Row[]> => (await db.executeQuery<Row>({ ...compiled, parameters })).rows;
}

/**
 * A select compiled once, run on the store's reader where it has one (Database.read: at once, without
 * Kysely), otherwise as compiledOnce does. Only for selects outside a transaction: the reader sees what is
 * committed, not a transaction's own changes.
 */
function compiledRead<Row>(query: Compilable<Row>, { db, read }: Pick<Database, 'db' | 'read'>) {
  if (read === undefined) {
    const run = compiledOnce(query);
    return (...parameters: unknown[]) => run(db, ...parameters);
  }
  const compiled = query.compile();
  return async (...parameters: unknown[]): Promise<Row[]> => read({ ...compiled, parameters });
}

/** The users of the stretches a list walks, one at a time. */
async function* eachOf<T>(stretches: AsyncIterable<{ readonly users: readonly T[] }>): AsyncGenerator<T> {
  for await (const { users } of stretches) yield* users;
}

/** Explains why a conditional change touched no row: the user is gone, or has another version. */
async function whyUnchanged(db: Kysely<Tables>, id: number): Promise<ChangeResult<never>> {
  const row = await db.selectFrom('users').select('version').where('id', '=', id).executeTakeFirst();
  return row ? { outcome: 'stale', currentVersion: row.version } : { outcome: 'missing' };
}

/** The user repository over Kysely; store outages surface as StoreUnavailableError. */
export function createUserRepository(database: Database, options: ListOptions = {}): UserRepository {
  const { db } = database;
  const { guard, writing, ready } = createStoreGuard(database);
  const users = () => db.selectFrom('users').select(USER_COLUMNS);
  const selectById = compiledRead(users().where('id', '=', 0), database);
  const listed = () => db.selectFrom('users').select(LISTED_COLUMNS);
  const selectSlice = compiledRead(listed().where('id', '>', 0).orderBy('id').limit(0), database);
  // The number of users, kept by triggers in the transaction of every insert and delete (see the migration
  // 2026-11-23-04-count-users): 16 rows to add, however many users there are.
  const total = () => db.selectFrom('user_count').select((eb) => eb.fn.sum<number | string>('n').as('n'));
  const selectTotal = compiledRead(total(), database);
  const countAll = async () => Number((await selectTotal())[0]!.n);
  const selectPage = compiledRead(
    listed()
      .select(() => total().as('total'))
      .orderBy('id')
      .limit(0)
      .offset(0),
    database,
  );
  /**
   * Sets the fields given, and bumps the version and updated_at only if one of them differs from the stored
   * value: a patch that changes nothing makes no new version, which would fail other clients' If-Match. SET
   * reads the row as it was, and the UPDATE decides on the row it locks, so no change slips in between.
   */
  const patchUser = (into: Kysely<Tables>, changes: Partial<UserFields>, now: string, id: number) => {
    const given = FIELDS.filter((field) => changes[field] !== undefined);
    const changed =
      given.length === 0
        ? sql`1 = 0`
        : sql.join(
            given.map((field) => sql`${sql.ref(FIELD_COLUMNS[field])} <> ${changes[field]}`),
            sql` OR `,
          );
    return into
      .updateTable('users')
      .set({
        ...toColumns(changes),
        updated_at: sql<string>`CASE WHEN ${changed} THEN ${now} ELSE updated_at END`,
        version: sql<number>`CASE WHEN ${changed} THEN version + 1 ELSE version END`,
      })
      .where('id', '=', id);
  };
  const insertReturning = compiledOnce(
    db
      .insertInto('users')
      .values(newUserRow({ firstName: '', lastName: '', email: '' }, ''))
      .returning(USER_COLUMNS),
  );
  /** The values of toColumns for every field, in its order. */
  const columnValues = (fields: UserFields) => [
    fields.firstName,
    foldCase(fields.firstName),
    fields.lastName,
    foldCase(fields.lastName),
    fields.email,
    foldCase(fields.email),
  ];
  async function insertUser(into: Kysely<Tables>, fields: UserFields, now: string): Promise<User> {
    const [row] = await insertReturning(into, ...columnValues(fields), now, now);
    return toUser(row!);
  }
  const lists = createUserLists(db, guard, {
    ...options,
    searchIndex: database.searchIndex,
    searchConnections: database.searchConnections,
    read: database.read,
  });
  const count = async (filter: UserFilter = {}): Promise<Tally> =>
    unfiltered(filter) ? { total: await guard(countAll), exact: true } : lists.countMatching(filter);

  /**
   * The users of a first slice in id order and then of the slices after it: keyset slices on the primary key.
   * Each query is short, so no connection or lock is held while a slow client reads, and memory holds one
   * slice at a time.
   */
  async function* slicesFrom(first: ListedRow[], sliceSize: number): AsyncGenerator<ListedUser> {
    for (let rows = first; ; ) {
      const more = rows.length === sliceSize;
      const after = more ? rows[rows.length - 1]!.id : 0;
      // Each row is let go as soon as it is handed on. A slice waits for a slow reader across many garbage
      // collections, and rows it still held would be promoted to the old generation, to be collected only by
      // a full collection.
      rows.reverse();
      for (let row = rows.pop(); row !== undefined; row = rows.pop()) yield toListedUser(row);
      if (!more) return;
      // better-sqlite3 answers synchronously: without a turn of its own for each slice, a long list would
      // never give the event loop back, and would stall every other request until it ended.
      await nextTurn();
      rows = await guard(() => selectSlice(after, sliceSize));
    }
  }
  const versions = (condition: VersionCondition) => (condition === 'any' ? [] : condition);
  /**
   * The UPDATE of changeUser for one shape of change (the fields given, and how many versions an If-Match
   * names), built and compiled at its first use: building and compiling it through Kysely on every write
   * would be a share of every PUT's CPU.
   */
  const compiledChanges = new Map<string, CompiledChange>();
  function compiledChange(given: readonly (keyof UserFields)[], versionCount: number): CompiledChange {
    const shape = `${given.join(',')}/${versionCount}`;
    const kept = compiledChanges.get(shape);
    if (kept !== undefined) return kept;
    // Built with a placeholder for each value, the query's parameters say which value each one binds.
    const sources = new Map<unknown, ChangeValue>();
    const stand = (text: string, source: ChangeValue) => {
      sources.set(text, source);
      return text;
    };
    const fields = Object.fromEntries(given.map((field) => [field, stand(`\u0000${field.toUpperCase()}`, { field })]));
    for (const field of given) sources.set(foldCase(fields[field]!), { field, folded: true });
    const id = stand('\u0000ID', 'id') as unknown as number;
    const versionsGiven = Array.from({ length: versionCount }, (_, i) => stand(`\u0000VERSION ${i}`, { version: i }) as unknown as number);
    const compiled = patchUser(db, fields, stand('\u0000NOW', 'now'), id)
      .$if(versionCount > 0, (qb) => qb.where('version', 'in', versionsGiven))
      .returning(USER_COLUMNS)
      .compile();
    const change = { compiled, values: compiled.parameters.map((parameter) => sources.get(parameter)!) };
    if (change.values.some((source) => source === undefined)) throw new Error(`the UPDATE of ${shape} binds a value it was not built with`);
    // 7 sets of fields × the versions an If-Match names: a handful in use, but bounded whatever clients send.
    if (compiledChanges.size < MAX_COMPILED_CHANGES) compiledChanges.set(shape, change);
    return change;
  }
  // One UPDATE that sets only the fields given: the merge happens in the store, so a concurrent change of
  // another field can never be overwritten with a stale copy, and nothing has to be read first or retried.
  // A change that changes nothing still answers the user (its version as it was).
  const changeUser = (id: number, changes: Partial<UserFields>, now: string, condition: VersionCondition) =>
    writing(async (trx) => {
      if (condition !== 'any' && condition.length === 0) return whyUnchanged(trx, id);
      const given = FIELDS.filter((field) => changes[field] !== undefined);
      const { compiled, values } = compiledChange(given, versions(condition).length);
      const value = (source: ChangeValue): unknown =>
        source === 'now'
          ? now
          : source === 'id'
            ? id
            : 'version' in source
              ? versions(condition)[source.version]
              : source.folded
                ? foldCase(changes[source.field]!)
                : changes[source.field];
      const [row] = (await trx.executeQuery<StoredUser>({ ...compiled, parameters: values.map(value) })).rows;
      return row ? { outcome: 'done' as const, value: toUser(row) } : whyUnchanged(trx, id);
    });

  return {
    ping: ready,
    create: (fields, now) => writing((trx) => insertUser(trx, fields, now)),
    findById: (id) =>
      guard(async () => {
        const [row] = await selectById(id);
        return row && toUser(row);
      }),
    async list(filter, order, sliceSize) {
      if (!unfiltered(filter) || !byIdOnly(order)) {
        return { ...(await count(filter)), users: eachOf(lists.walk(filter, order, undefined, sliceSize)) };
      }
      // The whole collection: its first slice and its size come from one statement (one snapshot, and one
      // statement fewer for a list that fits in a slice, the common case).
      const first = await guard(() => selectPage(sliceSize, 0));
      const total = first.length > 0 ? Number(first[0]!.total) : await guard(countAll);
      return { total, exact: true, users: slicesFrom(first, sliceSize) };
    },
    count,
    listAt: lists.listAt,
    // Forwards through the whole collection by id (a shape B `limit`, a `next` link): compiled once.
    listFrom: (filter, order, position, limit) =>
      unfiltered(filter) && byIdOnly(order) && (position === undefined || 'after' in position)
        ? guard(async () => ({ users: (await selectSlice(position === undefined ? 0 : position.after[0], limit)).map(toListedUser) }))
        : lists.listFrom(filter, order, position, limit),
    listSlice: (offset, limit) =>
      guard(async () => {
        // The page and the size of the collection in one statement, so both come from one snapshot without a
        // transaction (which on SQLite would take the write lock: BEGIN IMMEDIATE, see sqlite/dialect.ts).
        const rows = await selectPage(limit, offset);
        if (rows.length > 0) return { users: rows.map(toListedUser), total: Number(rows[0]!.total) };
        // A page past the end has no row to carry the count.
        return { users: [], total: await countAll() };
      }),
    // A replace is a patch of every field: it too makes no new version when it changes nothing.
    replace: (id, fields, now, condition) => changeUser(id, fields, now, condition),
    patch: (id, changes, now, condition) => changeUser(id, changes, now, condition),
    delete: (id, condition) =>
      writing(async (trx) => {
        if (condition !== 'any' && condition.length === 0) return whyUnchanged(trx, id);
        const result = await trx
          .deleteFrom('users')
          .where('id', '=', id)
          .$if(condition !== 'any', (qb) => qb.where('version', 'in', versions(condition)))
          .executeTakeFirst();
        return Number(result.numDeletedRows) > 0 ? { outcome: 'done' as const, value: undefined } : whyUnchanged(trx, id);
      }),
    ...createIdempotencyKeyQueries(writing, insertUser),
  };
}
