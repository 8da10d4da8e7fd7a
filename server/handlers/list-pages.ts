import { fromBase64Url, toBase64Url } from '../domain/base64.js';
import { InvalidParameterError } from '../domain/errors.js';
import { MAX_STORED_NUMBER, storableText, type ListedUser, type Tally } from '../domain/user.js';
import { BY_ID, keysOf, orderOf, orderText, type ListPosition, type OrderKeys, type SortField, type UserFilter, type UserOrder } from '../domain/user-query.js';

// Cursors and links, the same for both shapes: a cursor is a position in an order, and a link is the query of
// the list it came from with that cursor (RFC 8288).

/** The version of the cursor's layout, its first element. */
const LAYOUT = 1;
/** Every field an order may name, by its own name: how a cursor names them, and shape B's names too. */
export const FIELDS: Readonly<Record<string, SortField>> = { id: 'id', email: 'email', firstName: 'firstName', lastName: 'lastName' };
/** Longest folded name or address a key may hold: the contract's 254, folded (which may lengthen it). */
const MAX_KEY_LENGTH = 1024;

/**
 * The cursor of a position in an order: base64url of `[1, order, "a" | "b", keys | null]`, where "a" reads
 * after the keys and "b" before them (null: before the end). Opaque to clients, and not secret: a forged one
 * can only name another position, and is checked like any input.
 */
export function encodeCursor(order: UserOrder, position: ListPosition): string {
  const [direction, keys] = 'after' in position ? ['a', position.after] : ['b', position.before === 'end' ? null : position.before];
  return toBase64Url(JSON.stringify([LAYOUT, orderText(order), direction, keys]));
}

/** Whether a cursor's key could be a user's: keys a store cannot hold were never made here (and PostgreSQL fails on them). */
const isKey = (value: unknown, field: SortField) =>
  field === 'id'
    ? Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= MAX_STORED_NUMBER
    : typeof value === 'string' && value.length <= MAX_KEY_LENGTH && storableText(value);

/**
 * The order and position of a cursor. A cursor that is not one this service made, or that was made for
 * another sort than the request names, is a 400 that says so.
 */
export function decodeCursor(cursor: string, requested: UserOrder | undefined): { order: UserOrder; position: ListPosition } {
  const invalid = () => new InvalidParameterError('cursor', 'is not a cursor this service made; use the links of a list unchanged');
  let decoded: unknown;
  try {
    decoded = JSON.parse(fromBase64Url(cursor));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(decoded) || decoded.length !== 4) throw invalid();
  const [layout, text, direction, keys] = decoded as unknown[];
  if (layout !== LAYOUT || typeof text !== 'string' || text.length > 80 || !/^-?\w+(,-?\w+)*$/.test(text) || (direction !== 'a' && direction !== 'b')) throw invalid();
  let order: UserOrder;
  try {
    order = orderOf(text, FIELDS);
  } catch {
    throw invalid();
  }
  // An order as orderOf writes it ends with id, so the cursor's text must read back as itself.
  if (orderText(order) !== text) throw invalid();
  if (requested !== undefined && orderText(requested) !== text) {
    throw new InvalidParameterError('cursor', 'was made for another sort; follow the links of a list without changing its sort');
  }
  if (keys === null && direction === 'b') return { order, position: { before: 'end' } };
  if (!Array.isArray(keys) || keys.length !== order.length || !keys.every((key, i) => isKey(key, order[i]!.field))) throw invalid();
  return { order, position: direction === 'a' ? { after: keys as OrderKeys } : { before: keys as OrderKeys } };
}

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
  signal: () => AbortSignal,
): { filter: UserFilter; order: UserOrder; position: ListPosition | undefined } {
  // Only a search checks whether its client is still there; asking for the signal makes one.
  const filter = { search: query.q, email: query.email, signal: query.q === undefined ? undefined : signal() };
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
export const totalHeaders = ({ total, exact }: Tally) => ({ 'X-Total-Count': String(total), 'X-Total-Count-Relation': exact ? ('eq' as const) : ('gte' as const) });
