import { base64UrlToBytes, bytesToBase64Url } from '../domain/base64.js';
import { InvalidParameterError } from '../domain/errors.js';
import { MAX_STORED_NUMBER, storableText } from '../domain/user.js';
import { orderOf, orderText, type ListPosition, type OrderKeys, type SortField, type UserOrder } from '../domain/user-query.js';

// Cursors, the same for both shapes: a cursor is a position in an order, opaque to clients, and not secret: a
// forged one can only name another position, and is checked like any input.
//
// A cursor is base64url (no padding) of bytes: the layout (2); the direction (0: after the keys, 1: before
// them, 2: before the end, with no keys); the number of fields in the order, and for each its code (FIELD_CODES,
// plus 4 when descending); then the keys of the position, in the order's fields: an id as an unsigned LEB128
// number, a folded name or address as the LEB128 number of its code points, then each code point in LEB128.
// Every code point takes at most three bytes (UTF-8 takes four, JSON six for a control character), so the
// longest cursor a list makes, two names of 200 characters and an address of 254, is 1,963 characters: short
// enough for a test-data generator to make one of the longest length the contract admits at once (Hypothesis
// stops near 2,048 characters).

/** The layout this service writes, the cursor's first byte. */
const LAYOUT = 2;
/** Every field an order may name, by its own name: how a cursor names them, and shape B's names too. */
export const FIELDS: Readonly<Record<string, SortField>> = { id: 'id', email: 'email', firstName: 'firstName', lastName: 'lastName' };
/** Each field's code in a cursor, its index here. */
const FIELD_CODES: readonly SortField[] = ['id', 'email', 'firstName', 'lastName'];
const DESCENDING = 4;
const [AFTER, BEFORE, BEFORE_END] = [0, 1, 2];
/** Longest folded name or address a key may hold: the contract's 254, folded (which may lengthen it). */
const MAX_KEY_LENGTH = 1024;

/** Appends a non-negative integer in unsigned LEB128: seven bits a byte, least significant first. */
function writeNumber(bytes: number[], value: number): void {
  while (value >= 0x80) {
    bytes.push((value % 0x80) | 0x80);
    value = Math.floor(value / 0x80);
  }
  bytes.push(value);
}

/** The cursor of a position in an order. */
export function encodeCursor(order: UserOrder, position: ListPosition): string {
  const keys = 'after' in position ? position.after : position.before === 'end' ? undefined : position.before;
  const direction = 'after' in position ? AFTER : keys === undefined ? BEFORE_END : BEFORE;
  const bytes = [LAYOUT, direction, order.length];
  for (const { field, descending } of order) bytes.push(FIELD_CODES.indexOf(field) | (descending ? DESCENDING : 0));
  for (const key of keys ?? []) {
    if (typeof key === 'number') {
      writeNumber(bytes, key);
      continue;
    }
    const points = Array.from(key, (character) => character.codePointAt(0)!);
    writeNumber(bytes, points.length);
    for (const point of points) writeNumber(bytes, point);
  }
  return bytesToBase64Url(Uint8Array.from(bytes));
}

/** Whether a cursor's key could be a user's: keys a store cannot hold were never made here (and PostgreSQL fails on them). */
const isKey = (value: unknown, field: SortField) =>
  field === 'id'
    ? Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= MAX_STORED_NUMBER
    : typeof value === 'string' && value.length <= MAX_KEY_LENGTH && storableText(value);

/** What a cursor says, before its keys are checked against its order. */
interface Written {
  readonly order: UserOrder;
  readonly direction: 'a' | 'b';
  readonly keys: unknown;
}

/** Thrown by a reader on bytes that are no cursor; decodeCursor answers with its 400. */
class NotACursor extends Error {}

/** An order a cursor names, if it is one orderOf makes: known fields, each once, ending with id. */
function canonicalOrder(text: unknown): UserOrder {
  if (typeof text !== 'string' || text.length > 80 || !/^-?\w+(,-?\w+)*$/.test(text)) throw new NotACursor();
  let order: UserOrder;
  try {
    order = orderOf(text, FIELDS);
  } catch {
    throw new NotACursor();
  }
  if (orderText(order) !== text) throw new NotACursor();
  return order;
}

/** A cursor of layout 2, the one encodeCursor writes. */
function readBytes(bytes: Uint8Array): Written {
  let at = 1;
  const byte = (): number => {
    if (at >= bytes.length) throw new NotACursor();
    return bytes[at++]!;
  };
  const number = (): number => {
    let value = 0;
    // Five bytes hold every id (31 bits); a longer number is no key.
    for (let scale = 1; scale < 0x80 ** 5; scale *= 0x80) {
      const next = byte();
      value += (next & 0x7f) * scale;
      if (next < 0x80) return value;
    }
    throw new NotACursor();
  };
  const text = (): string => {
    const count = number();
    if (count > MAX_KEY_LENGTH) throw new NotACursor();
    let value = '';
    for (let i = 0; i < count; i++) {
      const point = number();
      if (point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff)) throw new NotACursor();
      value += String.fromCodePoint(point);
    }
    return value;
  };
  const direction = byte();
  const fields = byte();
  if (direction > BEFORE_END || fields < 1 || fields > FIELD_CODES.length) throw new NotACursor();
  const named: string[] = [];
  for (let i = 0; i < fields; i++) {
    const code = byte();
    if (code >= 2 * DESCENDING) throw new NotACursor();
    named.push(`${code & DESCENDING ? '-' : ''}${FIELD_CODES[code % DESCENDING]}`);
  }
  const order = canonicalOrder(named.join(','));
  const keys = direction === BEFORE_END ? null : order.map(({ field }) => (field === 'id' ? number() : text()));
  if (at !== bytes.length) throw new NotACursor();
  return { order, direction: direction === AFTER ? 'a' : 'b', keys };
}

/**
 * A cursor of layout 1, base64url of the JSON `[1, order, "a" | "b", keys | null]`, which the service wrote
 * before layout 2: read still, so that links made before an upgrade go on working.
 */
function readJson(bytes: Uint8Array): Written {
  let decoded: unknown;
  try {
    decoded = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new NotACursor();
  }
  if (!Array.isArray(decoded) || decoded.length !== 4) throw new NotACursor();
  const [layout, text, direction, keys] = decoded as unknown[];
  if (layout !== 1 || (direction !== 'a' && direction !== 'b')) throw new NotACursor();
  return { order: canonicalOrder(text), direction, keys };
}

/**
 * The order and position of a cursor. A cursor that is not one this service made, or that was made for
 * another sort than the request names, is a 400 that says so.
 */
export function decodeCursor(cursor: string, requested: UserOrder | undefined): { order: UserOrder; position: ListPosition } {
  const invalid = () => new InvalidParameterError('cursor', 'is not a cursor this service made; use the links of a list unchanged');
  let written: Written;
  let bytes: Uint8Array;
  try {
    bytes = base64UrlToBytes(cursor);
    written = bytes[0] === LAYOUT ? readBytes(bytes) : readJson(bytes);
  } catch {
    throw invalid();
  }
  const { order, direction, keys } = written;
  if (requested !== undefined && orderText(requested) !== orderText(order)) {
    throw new InvalidParameterError('cursor', 'was made for another sort; follow the links of a list without changing its sort');
  }
  let position: ListPosition;
  if (keys === null && direction === 'b') position = { before: 'end' };
  else if (Array.isArray(keys) && keys.length === order.length && keys.every((key, i) => isKey(key, order[i]!.field))) {
    position = direction === 'a' ? { after: keys as OrderKeys } : { before: keys as OrderKeys };
  } else throw invalid();
  // One position, one cursor: bytes or base64 written another way (a longer number, spare bits) were not made here.
  if (bytes[0] === LAYOUT && encodeCursor(order, position) !== cursor) throw invalid();
  return { order, position };
}
