import type { ListedUser, OrderKeys, Tally } from './user.js';

// What a list asks for, independent of either wire shape: which users (a filter), in which order (a sort),
// and from where (a position in that order).

/** The fields a list can be sorted by. */
export type SortField = 'id' | 'email' | 'firstName' | 'lastName';

/** One field of a sort, and its direction. */
export interface SortKey {
  readonly field: SortField;
  readonly descending: boolean;
}

/**
 * An order of users that every list can page through by key: the fields asked for, and then `id` (unique),
 * so that no two users tie. It always ends with `id`.
 */
export type UserOrder = readonly SortKey[];

/** Which users a list holds. Both are optional; given together, a user must match both. */
export interface UserFilter {
  /** Case-insensitive substring of the first name, the last name or the e-mail address. */
  readonly search?: string;
  /** The e-mail address, compared case-insensitively. */
  readonly email?: string;
  /**
   * Aborts when nobody waits for the list any more (its client went away): a search then stops before its
   * next statement. The filter object stands for one request's search (user-lists.ts admits it once).
   */
  readonly signal?: AbortSignal;
  /**
   * Who asks (the client, as the per-client limits count it): searches share their turns among askers, and
   * one asker may keep only its share of them waiting.
   */
  readonly searcher?: string;
}

export type { OrderKeys } from './user.js';

/**
 * Where in an order a list starts: after a user's keys, or before them; `before: 'end'` reads backwards from
 * the last user (the last page).
 */
export type ListPosition = { readonly after: OrderKeys } | { readonly before: OrderKeys | 'end' };

/**
 * How far pages picked by number reach: page × per_page at most this. A numbered page is found by counting past
 * the users before it, which at 1,000,000 users costs seconds of the store's time; deeper readers follow a
 * page's links, whose cursors cost the same at any depth (Elasticsearch's max_result_window is the same bound).
 */
export const NUMBERED_PAGES_REACH = 10_000;

/**
 * How far a search counts its matches: one that matches more says this many (its pages and links still reach
 * every match). Counting every match of common text ("ann", "example") would read every user of the store;
 * counting this far reads at most this many entries of the substring index. The same bound as numbered pages:
 * `total_pages` then counts the pages a number reaches (Elasticsearch's track_total_hits stops at 10,000
 * likewise).
 */
export const SEARCH_COUNT_REACH = NUMBERED_PAGES_REACH;

/** The count of `n` matches of a search, as every store gives it: exact up to SEARCH_COUNT_REACH, beyond it that many and not exact. */
export const searchTally = (n: number): Tally => (n <= SEARCH_COUNT_REACH ? { total: n, exact: true } : { total: SEARCH_COUNT_REACH, exact: false });

/** The default order, and the one a list without `sort` has: by id, ascending. */
export const BY_ID: UserOrder = [{ field: 'id', descending: false }];

/**
 * Case folding for search, filter and sort: Unicode lower case, so "ÉMILE" finds "Émile" on every store. The
 * store keeps each name and address folded beside it, written with it (migration 2026-11-24-01).
 */
export const foldCase = (text: string): string => text.toLowerCase();

/**
 * The order a sort asks for: the fields in turn (a field named twice counts where it first appears), then
 * `id` in the direction of the last field, unless `id` was named. `sort` lists wire names, `-` for descending,
 * already checked against the contract's pattern; `fields` maps each wire name to its field.
 */
export function orderOf(sort: string | undefined, fields: Readonly<Record<string, SortField>>): UserOrder {
  if (sort === undefined) return BY_ID;
  const order: SortKey[] = [];
  for (const part of sort.split(',')) {
    const descending = part.startsWith('-');
    const field = fields[descending ? part.slice(1) : part];
    if (field === undefined) throw new Error(`sort names an unknown field: ${part}`);
    if (order.some((key) => key.field === field)) continue;
    order.push({ field, descending });
    if (field === 'id') return order;
  }
  return [...order, { field: 'id', descending: order[order.length - 1]!.descending }];
}

/** The order in the canonical text a cursor carries, e.g. `lastName,-firstName,-id`. */
export const orderText = (order: UserOrder): string => order.map((key) => `${key.descending ? '-' : ''}${key.field}`).join(',');

/** The keys of a user in an order. */
export function keysOf(user: ListedUser, order: UserOrder): OrderKeys {
  return order.map(({ field }) => (field === 'id' ? user.id : foldCase(user[field])));
}

/** Whether an order is the default one, by id ascending. */
export const byIdOnly = (order: UserOrder): boolean => order.length === 1 && order[0]!.field === 'id' && !order[0]!.descending;

/** Whether a list of this filter is the whole collection. */
export const unfiltered = (filter: UserFilter): boolean => filter.search === undefined && filter.email === undefined;
