// Replies of lists kept, serialized, until the store changes: a page of 6 read again cost its handler,
// mapping, links and JSON (43 µs under load, a third of the request), where the check that the store is as
// it was is one statement. Only where the store can say so at once (SQLite's PRAGMA data_version on the
// reader: any commit, by this process or another, changes it); elsewhere (PostgreSQL) nothing is kept.

/** A reply as it was sent: its status, the handler's headers, and its body serialized. */
export interface KeptReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly contentType: string;
  readonly body: string;
}

/**
 * The operations whose reply to a valid request is a function of the store and the query string alone: no
 * path parameter, no credential, nothing from the clock, and handlers that read no header (their header
 * parameters are checked on every request). The router refuses to keep any other (router.ts).
 */
export const KEPT_OPERATIONS: ReadonlySet<string> = new Set(['listUsers', 'listDemoUsers']);
/** At most this many replies are kept, each of at most MAX_KEPT_BODY_CHARS under a query of at most MAX_KEY_CHARS: under 5 MiB. */
export const MAX_KEPT_REPLIES = 64;
export const MAX_KEPT_BODY_CHARS = 64 * 1024;
export const MAX_KEY_CHARS = 2048;

/** What a lookup found: the store's version now, and the reply kept for the request if the store has not changed since it was made. */
export interface Lookup {
  readonly version: number;
  readonly reply: KeptReply | undefined;
}

export interface ReplyCache {
  /** Undefined when the store cannot tell its version (it is down): the request reads it, and meets the outage there. */
  lookup(operationId: string, query: string): Lookup | undefined;
  /** Keeps a reply made from the store as it was at `version`, unless the store changed meanwhile, or it is too large. */
  keep(operationId: string, query: string, version: number, reply: KeptReply): void;
}

/**
 * A cache of replies over a store's version. Any change of the version drops every reply at once, so a reply
 * is never served after a write that the store committed before the request asked: it is read after that
 * write's acknowledgement by whoever made it. A reply is kept only if the version did not move while it was
 * made (a list read in slices may span commits). `counted` hears of each lookup, whether it found a reply.
 */
export function createReplyCache(storeVersion: () => number, counted: (found: boolean) => void): ReplyCache {
  let version: number | undefined;
  const kept = new Map<string, KeptReply>();
  const keyOf = (operationId: string, query: string) => `${operationId}?${query}`;
  const versionNow = () => {
    try {
      return storeVersion();
    } catch {
      return undefined;
    }
  };
  return {
    lookup(operationId, query) {
      const now = versionNow();
      if (now === undefined) {
        kept.clear();
        version = undefined;
        counted(false);
        return undefined;
      }
      if (now !== version) {
        kept.clear();
        version = now;
      }
      const reply = query.length <= MAX_KEY_CHARS ? kept.get(keyOf(operationId, query)) : undefined;
      counted(reply !== undefined);
      return { version: now, reply };
    },
    keep(operationId, query, madeAt, reply) {
      if (query.length > MAX_KEY_CHARS || reply.body.length > MAX_KEPT_BODY_CHARS) return;
      if (madeAt !== version || versionNow() !== madeAt) return;
      kept.set(keyOf(operationId, query), reply);
      if (kept.size > MAX_KEPT_REPLIES) kept.delete(kept.keys().next().value!);
    },
  };
}
