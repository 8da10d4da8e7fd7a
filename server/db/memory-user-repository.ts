import { DEMO_USERS } from '../domain/demo-users.js';
import { IdempotencyKeyInFlightError } from '../domain/errors.js';
import { foldCase, keysOf, searchTally, type ListPosition, type OrderKeys, type UserFilter, type UserOrder } from '../domain/user-query.js';
import type { ChangeResult, IdempotencyRecord, UserRepository, VersionCondition } from '../domain/user-repository.js';
import { changesAny, type ListedUser, type Tally, type User, type UserFields } from '../domain/user.js';

// The user repository in the memory of one JavaScript realm: what the MSW handlers of the client package run
// the service's own handlers and domain over, in Node and in browsers (it imports nothing of either). It keeps
// the stores' rules: ids are never reused, lists fold case and compare by code point, ties go by id, and a
// position in an order is a key the next page starts strictly after. tests/client/msw.test.ts holds it to
// what the real stores answer.

/** Code point order, as both stores sort text (JavaScript's `<` compares UTF-16 code units instead). */
function byCodePoint(a: string, b: string): number {
  const x = a[Symbol.iterator]();
  const y = b[Symbol.iterator]();
  for (;;) {
    const [p, q] = [x.next(), y.next()];
    if (p.done || q.done) return (p.done ? 0 : 1) - (q.done ? 0 : 1);
    const difference = p.value.codePointAt(0)! - q.value.codePointAt(0)!;
    if (difference !== 0) return difference;
  }
}

/** Compares two users' keys in an order: negative when `a` comes first. */
function compareKeys(a: OrderKeys, b: OrderKeys, order: UserOrder): number {
  for (let i = 0; i < order.length; i++) {
    const [x, y] = [a[i]!, b[i]!];
    const difference = typeof x === 'number' && typeof y === 'number' ? x - y : byCodePoint(String(x), String(y));
    if (difference !== 0) return order[i]!.descending ? -difference : difference;
  }
  return 0;
}

const matches = (user: User, filter: UserFilter): boolean => {
  if (filter.email !== undefined && foldCase(user.email) !== foldCase(filter.email)) return false;
  if (filter.search === undefined) return true;
  const text = foldCase(filter.search);
  return [user.firstName, user.lastName, user.email].some((field) => foldCase(field).includes(text));
};

const listed = ({ id, firstName, lastName, email }: User): ListedUser => ({ id, firstName, lastName, email });

interface StoredKey extends IdempotencyRecord {
  readonly owner: string;
  readonly expiresAt: string;
}

/** An in-memory repository, and the way to put it back to the demo data. */
export interface MemoryRepository extends UserRepository {
  /** Forgets every user and idempotency key and holds the first users (the demo users) again, with ids from 1. */
  restoreDemoData(now: string): void;
}

/** A memory store that starts with `firstUsers` (the demo users unless given), and restores them on request. */
export function createMemoryRepository(now: string = new Date().toISOString(), firstUsers: readonly UserFields[] = DEMO_USERS): MemoryRepository {
  let users = new Map<number, User>();
  // Each client's keys apart, as the stores key them by client and key; Map order is the order of claims.
  let keys = new Map<string, Map<string, StoredKey>>();
  let nextId = 1;
  const clientKeys = (client: string) => keys.get(client) ?? keys.set(client, new Map()).get(client)!;

  const insert = (fields: UserFields, at: string): User => {
    const user = { id: nextId++, ...fields, createdAt: at, updatedAt: at, version: 1 };
    users.set(user.id, user);
    return user;
  };
  /** The users that match, in the order. */
  const sorted = (filter: UserFilter, order: UserOrder): User[] =>
    [...users.values()].filter((user) => matches(user, filter)).sort((a, b) => compareKeys(keysOf(a, order), keysOf(b, order), order));
  const meets = (user: User, condition: VersionCondition) => condition === 'any' || condition.includes(user.version);
  /** Applies a change if the user exists and its version meets the condition. */
  function change<T>(id: number, condition: VersionCondition, apply: (user: User) => T): ChangeResult<T> {
    const user = users.get(id);
    if (!user) return { outcome: 'missing' };
    if (!meets(user, condition)) return { outcome: 'stale', currentVersion: user.version };
    return { outcome: 'done', value: apply(user) };
  }
  const update = (user: User, fields: Partial<UserFields>, at: string): User => {
    const changed = { ...user, ...fields, updatedAt: at, version: user.version + 1 };
    users.set(user.id, changed);
    return changed;
  };
  function restoreDemoData(at: string): void {
    users = new Map();
    keys = new Map();
    nextId = 1;
    for (const fields of firstUsers) insert(fields, at);
  }
  restoreDemoData(now);

  /** Sets the fields given; a change that changes nothing makes no new version (sql-user-repository.ts). */
  const patch = (id: number, changes: Partial<UserFields>, at: string, condition: VersionCondition) =>
    change(id, condition, (user) => (changesAny(user, changes) ? update(user, changes, at) : user));

  /** How many match, as the stores count them: a search counts up to SEARCH_COUNT_REACH. */
  const tally = (filter: UserFilter, n: number): Tally => (filter.search === undefined ? { total: n, exact: true } : searchTally(n));

  return {
    restoreDemoData,
    ping: async () => undefined,
    create: async (fields, at) => insert(fields, at),
    findById: async (id) => users.get(id),
    async list(filter, order) {
      const all = sorted(filter, order).map(listed);
      return {
        ...tally(filter, all.length),
        users: (async function* () {
          yield* all;
        })(),
      };
    },
    count: async (filter = {}) => tally(filter, sorted(filter, [{ field: 'id', descending: false }]).length),
    listSlice: async (offset, limit) => ({ users: [...users.values()].slice(offset, offset + limit).map(listed), total: users.size }),
    listAt: async (filter, order, offset, limit) => ({
      users: sorted(filter, order)
        .slice(offset, offset + limit)
        .map(listed),
    }),
    // Every user is at hand: a read here never runs out of time, so it never stops short.
    async listFrom(filter, order, position: ListPosition | undefined, limit) {
      const all = sorted(filter, order);
      if (position === undefined) return { users: all.slice(0, limit).map(listed) };
      if ('after' in position)
        return {
          users: all
            .filter((user) => compareKeys(keysOf(user, order), position.after, order) > 0)
            .slice(0, limit)
            .map(listed),
        };
      const before = position.before === 'end' ? all : all.filter((user) => compareKeys(keysOf(user, order), position.before as OrderKeys, order) < 0);
      return { users: before.slice(Math.max(0, before.length - limit)).map(listed) };
    },
    // A replace is a patch of every field, as on the stores (sql-user-repository.ts).
    replace: async (id, fields, at, condition) => patch(id, fields, at, condition),
    patch: async (id, changes, at, condition) => patch(id, changes, at, condition),
    delete: async (id, condition) => change(id, condition, () => void users.delete(id)),

    async claimKey({ client, key }, fingerprint, claim, keysPerClient) {
      const own = clientKeys(client);
      const held = own.get(key);
      if (held && held.expiresAt > claim.now) return { claimed: false, record: held };
      // An expired key is forgotten and claimed anew, as the newest of its client's.
      own.delete(key);
      own.set(key, { fingerprint, state: 'in-flight', outcome: null, lockedUntil: claim.lockedUntil, owner: claim.owner, expiresAt: claim.expiresAt });
      // A client keeps its newest keys only.
      for (const oldest of [...own.keys()].slice(0, Math.max(0, own.size - keysPerClient))) own.delete(oldest);
      return { claimed: true };
    },
    async takeOverKey({ client, key }, expiredLock, { owner, lockedUntil }) {
      const held = keys.get(client)?.get(key);
      if (held?.state !== 'in-flight' || held.lockedUntil !== expiredLock) return false;
      clientKeys(client).set(key, { ...held, owner, lockedUntil });
      return true;
    },
    async createWithKey(fields, at, { client, key }, owner) {
      const held = keys.get(client)?.get(key);
      if (held?.state !== 'in-flight' || held.owner !== owner) throw new IdempotencyKeyInFlightError();
      const user = insert(fields, at);
      clientKeys(client).set(key, { ...held, state: 'done', outcome: JSON.stringify({ created: user }) });
      return user;
    },
    async releaseKey({ client, key }, owner) {
      const held = keys.get(client)?.get(key);
      if (held && held.state === 'in-flight' && held.owner === owner) keys.get(client)!.delete(key);
    },
    async deleteExpiredKeys(at, limit) {
      let deleted = 0;
      for (const [client, own] of keys) {
        for (const [key, stored] of own) {
          if (deleted === limit) return deleted;
          if (stored.expiresAt <= at && own.delete(key)) deleted++;
        }
        if (own.size === 0) keys.delete(client);
      }
      return deleted;
    },
  };
}
