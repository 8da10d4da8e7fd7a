import type { ListedUser, Tally } from '../domain/user.js';
import { BY_ID, keysOf, orderOf, type ListPosition, type OrderKeys, type SortField, type UserFilter, type UserOrder } from '../domain/user-query.js';
import { decodeCursor } from './cursors.js';

// Pages and links, the same for both shapes: a link is the query of the list it came from with a cursor, a
// position in its order (cursors.ts) (RFC 8288).

/** A link to a list: its path and query, parameters without a value left out. */
export function listLink(path: string, query: Readonly<Record<string, string | number | undefined>>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  const search = params.toString();
  return search === '' ? path : `${path}?${search}`;
}

/** A Link header (RFC 8288) of relations and their targets, in the order given; undefined if there are none. */
export function linkHeader(links: ReadonlyArray<readonly [rel: string, target: string | undefined]>): string | undefined {
  const present = links.filter((link): link is readonly [string, string] => link[1] !== undefined);
  return present.length === 0 ? undefined : present.map(([rel, target]) => `<${target}>; rel="${rel}"`).join(', ');
}

/** The query parameters both shapes' lists share. */
interface ListQuery {
  readonly q?: string;
  readonly email?: string;
  readonly sort?: string;
  readonly cursor?: string;
}

/**
 * What a list request asks for: its filter, its order (the cursor's, which must be the sort's if both are
 * given), and where to start. `fields` maps the shape's names of sort fields to fields.
 */
export function readListQuery(
  query: ListQuery,
  fields: Readonly<Record<string, SortField>>,
  request: { readonly signal: AbortSignal; readonly client: string },
): { filter: UserFilter; order: UserOrder; position: ListPosition | undefined } {
  // Only a search checks whether its client is still there (asking for the signal makes one), and waits its
  // turn among its client's searches.
  const searching = query.q !== undefined;
  const filter = { search: query.q, email: query.email, signal: searching ? request.signal : undefined, searcher: searching ? request.client : undefined };
  const requested = query.sort === undefined ? undefined : orderOf(query.sort, fields);
  if (query.cursor === undefined) return { filter, order: requested ?? BY_ID, position: undefined };
  return { filter, ...decodeCursor(query.cursor, requested) };
}

/** Whether users follow a page read from a position: read forwards, as the store said; backwards, unless it began at the end. */
export const moreAfter = (position: ListPosition | undefined, more: boolean): boolean =>
  position !== undefined && 'before' in position ? position.before !== 'end' : more;

/**
 * Where the pages beside a page start: the next after its last user, the previous before its first. A read
 * that stopped short (UserSlice.stoppedAt) goes on from where it stopped in the direction it read, and an
 * empty page's next page from there too (reading forwards from it examines again what the read skipped).
 */
export function besideOf(
  order: UserOrder,
  position: ListPosition | undefined,
  page: { readonly users: readonly ListedUser[]; readonly more: boolean; readonly stoppedAt?: OrderKeys | undefined },
): { next?: ListPosition; prev?: ListPosition } {
  const [first, last] = [page.users[0], page.users[page.users.length - 1]];
  const backwards = position !== undefined && 'before' in position;
  const stop = page.stoppedAt;
  const next = stop !== undefined && (!backwards || !last) ? { after: stop } : page.more && last ? { after: keysOf(last, order) } : undefined;
  const prev = stop !== undefined && backwards ? { before: stop } : first ? { before: keysOf(first, order) } : undefined;
  return { ...(next && { next }), ...(prev && { prev }) };
}

/**
 * The headers of a list's count: `X-Total-Count`, and `X-Total-Count-Relation`, `eq` when it is exact and
 * `gte` when the list holds at least that many (a search stops counting; see Tally).
 */
export const totalHeaders = ({ total, exact }: Tally) => ({
  'X-Total-Count': String(total),
  'X-Total-Count-Relation': exact ? ('eq' as const) : ('gte' as const),
});
