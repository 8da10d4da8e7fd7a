import { fromBase64Url, toBase64Url } from '../domain/base64.js';
import { InvalidParameterError } from '../domain/errors.js';
import { MAX_STORED_NUMBER, storableText } from '../domain/user.js';
import { orderOf, orderText, type ListPosition, type OrderKeys, type SortField, type UserOrder } from '../domain/user-query.js';

// Cursors, the same for both shapes: a cursor is a position in an order, opaque to clients.

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
