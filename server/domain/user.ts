/** The value of each field of an order, for one user: strings case-folded, the id as is. */
export type OrderKeys = readonly (string | number)[];

/** A stored user record, independent of either wire shape. */
export interface User {
  readonly id: number;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  /** ISO 8601 instant, UTC. */
  readonly createdAt: string;
  /** ISO 8601 instant, UTC. */
  readonly updatedAt: string;
  /** Starts at 1 and grows by one with every replacement. */
  readonly version: number;
}

/**
 * The largest id or version a user can have: both are PostgreSQL `integer` columns (32 bits, signed), as the
 * contract's `UserId` is int32. A larger number names no user or version; a store must never be asked for one,
 * since PostgreSQL fails the statement where SQLite answers.
 */
export const MAX_STORED_NUMBER = 2 ** 31 - 1;

/** Whether text can be stored, or compared with what is: PostgreSQL's `text` cannot hold NUL (U+0000). */
export const storableText = (text: string): boolean => !text.includes('\u0000');

/** The fields a client may set: everything else belongs to the store. */
export type UserFields = Pick<User, 'firstName' | 'lastName' | 'email'>;

/** Whether a merge patch changes a user: whether a field it sets differs from the user's (case counts). */
export const changesAny = (user: UserFields, changes: Partial<UserFields>): boolean =>
  (Object.keys(changes) as (keyof UserFields)[]).some((field) => changes[field] !== undefined && changes[field] !== user[field]);

/**
 * A user as a list shows one: its id and fields, without timestamps or version. Lists read only these
 * columns: each column of a row read costs time, and a list that read them all would spend most of its
 * store time on columns it never shows.
 */
export type ListedUser = Pick<User, 'id'> & UserFields;

/**
 * How many users a list holds: exactly, or at least that many when a search stopped counting (at
 * SEARCH_COUNT_REACH matches, or when its store time for examining users one by one ran out).
 */
export interface Tally {
  readonly total: number;
  readonly exact: boolean;
  /**
   * Set when a search stopped counting because its store time ran out (not at SEARCH_COUNT_REACH): the
   * count depends on how fast the store was, and another may find more.
   */
  readonly stoppedShort?: true;
}

/** A whole list: how many users it holds, and the users, read as they are sent. */
export interface UserList extends Tally {
  readonly users: AsyncIterable<ListedUser>;
}

/**
 * Some users of a list, read from a position or after skipping some. A search that examines users one by one
 * may stop before it has found as many as asked (its store time ran out; see user-lists.ts): it then says
 * where it stopped, the keys of the last user it examined in the direction it read, and the list goes on
 * from there.
 */
export interface UserSlice {
  readonly users: readonly ListedUser[];
  readonly stoppedAt?: OrderKeys;
}

/** One page of a list, with how many users the list holds in all. */
export interface UserPage extends Tally {
  readonly users: readonly ListedUser[];
  /** Whether users follow this page. */
  readonly more: boolean;
  /** Where the read of a page that holds fewer users than it could stopped (see UserSlice). */
  readonly stoppedAt?: OrderKeys;
  readonly page: number;
  readonly perPage: number;
  readonly totalPages: number;
}

/**
 * Splits a full name at its first run of white space after trimming:
 * "Thomas Anderson" → Thomas / Anderson, "  Grace  Brewster Hopper " → Grace / Brewster Hopper, "Cher" → Cher / "".
 */
export function splitFullName(name: string): Pick<User, 'firstName' | 'lastName'> {
  const trimmed = name.trim();
  const match = /\s+/.exec(trimmed);
  if (!match) return { firstName: trimmed, lastName: '' };
  return { firstName: trimmed.slice(0, match.index), lastName: trimmed.slice(match.index + match[0].length) };
}

/** The full name of a user as shape A shows one it was not sent: first and last name, joined by a space. */
export const fullNameOf = (user: Pick<User, 'firstName' | 'lastName'>): string => [user.firstName, user.lastName].filter((part) => part !== '').join(' ');
