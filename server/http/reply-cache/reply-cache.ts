// Replies of reads cached, serialized, until the store changes: a page read again costs its handler, mapping,
// links and JSON each time, where the check that the store is as it was is one statement, SQLite's
// data_version (server/db/sqlite/reader.ts), for all the requests of a turn. Only where the store can say so at once
// (SQLite's reader: any commit, by this process or another, changes its version); elsewhere (PostgreSQL)
// nothing is cached.
//
// A request for a cached reply is answered at the end of the event loop's turn it arrived in, with every
// other such request of that turn, after one check of the store's version (confirm). Each of them was read
// from its socket before that check, so the check sees every write acknowledged before any of them was sent.
// One check serves a turn's requests, and their replies go out together: on loopback a reply written between
// two reads wakes the client on the other core each time; a turn's replies wake it once.
// Measurements and what was rejected: docs/decisions/reply-cache.md.

import { endOfTurn } from '../protocol/end-of-turn.js';

/**
 * A reply as it was sent: its status, the handler's headers, and its body serialized; and the operation that
 * made it, so that a request for it again is named and checked as that operation's without being routed again.
 */
export interface CachedReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly contentType: string;
  readonly body: string;
  readonly operationId: string;
}

/**
 * The operations whose reply to a valid request is a function of the store and the request target (path and
 * query string) alone: no credential, nothing from the clock, and no header read by their handler but those
 * listed, whose presence makes a request read the store as before (If-None-Match, which a 304 answers). Their
 * header parameters are checked on every request. The router refuses to cache any other (router.ts), and any
 * reply of these that a search made when its store time ran out (server/domain/time-bound.ts): the same
 * request may find more. A complete search is cached like any list: the same text searched again, by every
 * client of a frontend, costs one check of the store's version.
 */
export const CACHED_OPERATIONS: ReadonlyMap<string, readonly string[]> = new Map([
  ['listUsers', []],
  ['listDemoUsers', []],
  ['getUser', ['if-none-match']],
  ['getDemoUser', ['if-none-match']],
]);
/**
 * At most this many replies are cached, each of at most MAX_CACHED_BODY_CHARS under a request target of at most
 * MAX_KEY_CHARS, and MAX_CACHED_CHARS of bodies in all: about 8 MiB at the very most (4 Mi UTF-16 characters,
 * and the keys).
 */
export const MAX_CACHED_REPLIES = 256;
export const MAX_CACHED_BODY_CHARS = 64 * 1024;
export const MAX_CACHED_CHARS = 4 * 1024 * 1024;
export const MAX_KEY_CHARS = 2048;

/** What a lookup found: the store's version now, and the reply cached for the request if the store has not changed since it was made. */
export interface Lookup {
  readonly version: number;
  readonly reply: CachedReply | undefined;
}

export interface ReplyCache {
  /** The reply cached under `key`, not yet checked against the store (confirm does). */
  peek(key: string): CachedReply | undefined;
  /**
   * Resolves at the end of this turn of the event loop: true if the store has not changed since `reply` was
   * cached under `key` (it is then counted as found), false if it has or cannot tell (the request reads the
   * store, and its lookup counts it). The store's version is read once for all the turn's confirmations.
   */
  confirm(key: string, reply: CachedReply): Promise<boolean>;
  /**
   * The reply cached under `key` (the operation and its request target). Undefined when the store cannot tell
   * its version (it is down): the request reads it, and meets the outage there.
   */
  lookup(key: string): Lookup | undefined;
  /** Caches a reply made from the store as it was at `version`, unless the store changed meanwhile, or it is too large. */
  add(key: string, version: number, reply: CachedReply): void;
}

/**
 * A cache of replies over a store's version. Any change of the version drops every reply at once, so a reply
 * is never served after a write that the store committed before the request asked: it is read after that
 * write's acknowledgement by whoever made it. A reply is cached only if the version did not move while it was
 * made (a list read in slices may span commits). The oldest reply goes first. `counted` hears of each
 * lookup, whether it found a reply.
 */
export function createReplyCache(storeVersion: () => number, counted: (found: boolean) => void): ReplyCache {
  let version: number | undefined;
  const cached = new Map<string, CachedReply>();
  let cachedChars = 0;
  const drop = () => {
    cached.clear();
    cachedChars = 0;
  };
  const versionNow = () => {
    try {
      return storeVersion();
    } catch {
      return undefined;
    }
  };
  /** The store's version now; every reply cached is dropped if it moved (or cannot be read). */
  const versionChecked = () => {
    const now = versionNow();
    if (now !== version) {
      drop();
      version = now;
    }
    return now;
  };
  /** Whether the store's version is still the one the replies cached were made at. */
  const unchanged = () => {
    const before = version;
    const now = versionChecked();
    return now !== undefined && now === before;
  };
  /** The check of the turn under way, made once at its end, for every confirmation of the turn. */
  let check: Promise<boolean> | undefined;
  const checkedAtEndOfTurn = () =>
    (check ??= endOfTurn().then(() => {
      check = undefined;
      return unchanged();
    }));
  return {
    peek: (key) => (key.length <= MAX_KEY_CHARS ? cached.get(key) : undefined),
    async confirm(key, reply) {
      const current = (await checkedAtEndOfTurn()) && cached.get(key) === reply;
      if (current) counted(true);
      return current;
    },
    lookup(key) {
      const now = versionChecked();
      if (now === undefined) {
        counted(false);
        return undefined;
      }
      const reply = key.length <= MAX_KEY_CHARS ? cached.get(key) : undefined;
      counted(reply !== undefined);
      return { version: now, reply };
    },
    add(key, madeAt, reply) {
      if (key.length > MAX_KEY_CHARS || reply.body.length > MAX_CACHED_BODY_CHARS || cached.has(key)) return;
      if (madeAt !== version || versionNow() !== madeAt) return;
      cached.set(key, reply);
      cachedChars += reply.body.length;
      for (const [oldest, { body }] of cached) {
        if (cached.size <= MAX_CACHED_REPLIES && cachedChars <= MAX_CACHED_CHARS) break;
        cached.delete(oldest);
        cachedChars -= body.length;
      }
    },
  };
}
