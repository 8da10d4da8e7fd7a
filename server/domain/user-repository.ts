import type { ListPosition, UserFilter, UserOrder } from './user-query.js';
import type { ListedUser, Tally, User, UserFields, UserList, UserSlice } from './user.js';

/** Versions a change may apply to: any version, or one of those listed (an empty list matches none). */
export type VersionCondition = 'any' | readonly number[];

/** What became of a conditional change. */
export type ChangeResult<T> =
  | { readonly outcome: 'done'; readonly value: T }
  | { readonly outcome: 'missing' }
  | { readonly outcome: 'stale'; readonly currentVersion: number };

/** An idempotency key as stored. `outcome` is the JSON of the user as the first request created it, once there is one. */
export interface IdempotencyRecord {
  readonly fingerprint: string;
  readonly state: 'in-flight' | 'done';
  readonly outcome: string | null;
  /** Until when the request that holds the key may still be working on it (ISO 8601). */
  readonly lockedUntil: string;
}

/**
 * An idempotency key as its client named it. Keys are the client's own: the same text from another client is
 * another key, so that no client can replay, refuse or hold up another's create by sending its key.
 */
export interface ClientKey {
  /** Who sent it: its normalised address, as the per-client limits count it (http/limits/client-address.ts). */
  readonly client: string;
  readonly key: string;
}

/** A claim on an idempotency key: who holds it, and its timestamps (ISO 8601). */
export interface KeyClaim {
  /** A token only the claiming request knows; it must still hold the key when it commits. */
  readonly owner: string;
  readonly now: string;
  readonly lockedUntil: string;
  readonly expiresAt: string;
}

/** Storage of user records. Implementations translate store outages into StoreUnavailableError. */
export interface UserRepository {
  /** Resolves when a request would find the store working (it answers, has room, writes succeed); StoreUnavailableError otherwise. */
  ping(): Promise<void>;
  create(fields: UserFields, now: string): Promise<User>;
  findById(id: number): Promise<User | undefined>;
  /**
   * Every user that matches, in the order, read in slices so that no more than one slice is held at a time
   * and no statement examines more than a few thousand users; with how many match, counted before the users
   * are read (in the statement of the first slice, where it can be).
   */
  list(filter: UserFilter, order: UserOrder, sliceSize: number): Promise<UserList>;
  /**
   * How many users match (without a filter: a count the store keeps, not a scan); for a search, at most
   * SEARCH_COUNT_REACH, and no more than it found when its store time ran out (then not exact).
   */
  count(filter?: UserFilter): Promise<Tally>;
  /** Users in id order after skipping `offset`, at most `limit` of them, and the size of the collection. */
  listSlice(offset: number, limit: number): Promise<{ users: ListedUser[]; total: number }>;
  /** Users that match, in the order, after skipping `offset` of them: at most `limit`. */
  listAt(filter: UserFilter, order: UserOrder, offset: number, limit: number): Promise<UserSlice>;
  /** Users that match, in the order, from a position: at most `limit`, in the order even when read backwards. */
  listFrom(filter: UserFilter, order: UserOrder, position: ListPosition | undefined, limit: number): Promise<UserSlice>;
  /** Replaces the fields and bumps the version, if the version meets the condition. */
  replace(id: number, fields: UserFields, now: string, condition: VersionCondition): Promise<ChangeResult<User>>;
  /** Sets the fields given and keeps the others (a merge patch), and bumps the version, if the version meets the condition. */
  patch(id: number, changes: Partial<UserFields>, now: string, condition: VersionCondition): Promise<ChangeResult<User>>;
  delete(id: number, condition: VersionCondition): Promise<ChangeResult<undefined>>;

  /**
   * Claims a client's idempotency key (expired ones count as absent), forgetting that client's oldest keys
   * beyond `keysPerClient`; or returns the record that holds the key.
   */
  claimKey(
    key: ClientKey,
    fingerprint: string,
    claim: KeyClaim,
    keysPerClient: number,
  ): Promise<{ claimed: true } | { claimed: false; record: IdempotencyRecord }>;
  /** Takes over a key whose holder stopped before finishing (its lock ran out); false if another was faster. */
  takeOverKey(key: ClientKey, expiredLock: string, claim: KeyClaim): Promise<boolean>;
  /**
   * In one transaction: creates the user and stores it, as created, as the key's outcome, provided `owner`
   * still holds the key; otherwise nothing is stored and IdempotencyKeyInFlightError is thrown. Every
   * argument is data, as for every write: a writer in another process can run it (db/sqlite/store-writer.ts).
   */
  createWithKey(fields: UserFields, now: string, key: ClientKey, owner: string): Promise<User>;
  /** Gives up a key this owner claimed and whose request failed, so that a retry can run. */
  releaseKey(key: ClientKey, owner: string): Promise<void>;
  /** Deletes at most `limit` expired keys; returns how many. */
  deleteExpiredKeys(now: string, limit: number): Promise<number>;
}
