import { sql, type Expression, type ExpressionBuilder, type RawBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { foldCase, type OrderKeys, type SortField, type UserFilter, type UserOrder } from '../domain/user-query.js';
import type { ListedUser } from '../domain/user.js';
import type { Tables, UserRow } from './tables.js';

// The pieces of SQL a list is built of: its columns, the text a search matches, an order and a position in it.

/** Whether an order is by id alone (either way). */
export const inIdOrder = (order: UserOrder) => order.length === 1 && order[0]!.field === 'id';

/**
 * The index in ascending `ids` of the first id beyond `key`: above it (reading up), or at or above it (reading
 * down, where the ids before that index are those below it).
 */
export function firstBeyond(ids: readonly number[], key: number, descending: boolean): number {
  let [low, high] = [0, ids.length];
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (descending ? ids[middle]! < key : ids[middle]! <= key) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The column each field sorts by: the folded copy of text, so that case does not change the order. */
export const COLUMN = { id: 'id', email: 'email_key', firstName: 'first_name_key', lastName: 'last_name_key' } as const satisfies Record<
  SortField,
  keyof UserRow
>;

/** The columns a list reads: what it shows, and nothing else (each column read costs time on every row). */
export const LISTED_COLUMNS = ['id', 'first_name', 'last_name', 'email'] as const;
export type ListedRow = Pick<UserRow, (typeof LISTED_COLUMNS)[number]>;

/** Maps a row of a list to the user it shows. */
export const toListedUser = (row: ListedRow): ListedUser => ({ id: row.id, firstName: row.first_name, lastName: row.last_name, email: row.email });

type Users = ExpressionBuilder<Tables, 'users'>;
export type UserSelect<O> = SelectQueryBuilder<Tables, 'users', O>;

/** A LIKE pattern that matches `text` anywhere, its wildcards escaped. */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The folded copies a search looks in. */
export const SEARCHED_COLUMNS = ['first_name_key', 'last_name_key', 'email_key'] as const;

/** Whether the folded copies (of `table`, when given) contain the folded text. */
export function containsText(search: string, table?: string): RawBuilder<SqlBool> {
  const pattern = containing(foldCase(search));
  // ESCAPE names the escape character: PostgreSQL has one by default, SQLite none.
  return sql<SqlBool>`(${sql.join(
    SEARCHED_COLUMNS.map((column) => sql`${sql.ref(table === undefined ? column : `${table}.${column}`)} like ${pattern} escape '\\'`),
    sql` or `,
  )})`;
}

/** The rows of the filter's e-mail address, if it names one: an index lookup. */
export const byEmail = <O>(query: UserSelect<O>, filter: UserFilter) =>
  filter.email === undefined ? query : query.where('email_key', '=', foldCase(filter.email));

/** Sorts by the order's columns, or by the reverse of the order. */
export function sorted<O>(query: UserSelect<O>, order: UserOrder, backwards: boolean): UserSelect<O> {
  return order.reduce((q, key) => q.orderBy(COLUMN[key.field], key.descending !== backwards ? 'desc' : 'asc'), query);
}

/**
 * Rows strictly beyond `keys` in the order (read forwards or backwards): for keys (a, b, id), rows with a
 * beyond the first key, or equal to it and b beyond the second, and so on. The first column's own bound
 * (`a >= ...`) is stated once more on its own so that the store can start from it in the index.
 */
export function beyond(eb: Users, order: UserOrder, keys: OrderKeys, backwards: boolean): Expression<SqlBool> {
  const past = (i: number) => (order[i]!.descending !== backwards ? '<' : '>');
  const column = (i: number) => COLUMN[order[i]!.field];
  // Every field in one direction: a row value, which the store seeks to in the order's index. The
  // alternatives below bound only the first field, so a statement reads the users that tie on it from the
  // first of them to the position: in a group of 62,500, a page deep in it reads most of them.
  if (order.every((_, i) => past(i) === past(0))) {
    return sql<SqlBool>`(${sql.join(order.map((_, i) => sql.ref(column(i))))}) ${sql.raw(past(0))} (${sql.join([...keys])})`;
  }
  const alternatives = order.map((_, i) => eb.and([...order.slice(0, i).map((__, j) => eb(column(j), '=', keys[j]!)), eb(column(i), past(i), keys[i]!)]));
  const start = eb(column(0), past(0) === '<' ? '<=' : '>=', keys[0]!);
  return order.length === 1 ? alternatives[0]! : eb.and([start, eb.or(alternatives)]);
}

/** The keys of a row in an order. */
export const keysOfRow = (row: Pick<UserRow, 'id' | 'email_key' | 'first_name_key' | 'last_name_key'>, order: UserOrder): OrderKeys =>
  order.map((key) => row[COLUMN[key.field]]);
