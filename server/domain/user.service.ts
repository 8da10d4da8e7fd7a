import { IdempotencyKeyInFlightError, IdempotencyKeyReusedError, InvalidParameterError, PreconditionFailedError, UserNotFoundError } from './errors.js';
import { nextTurn } from './next-turn.js';
import type { ChangeResult, ClientKey, KeyClaim, UserRepository, VersionCondition } from './user-repository.js';
import { byIdOnly, NUMBERED_PAGES_REACH, unfiltered, type ListPosition, type UserFilter, type UserOrder } from './user-query.js';
import type { Tally, User, UserFields, UserList, UserPage, UserSlice } from './user.js';

/** How long a create may hold its idempotency key before a retry may take it over, unless configured. */
export const IDEMPOTENCY_LOCK_MS = 30_000;
/** How long an idempotency key and its stored response are kept. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;
/** How many keys one client keeps, unless configured: past it, its oldest are forgotten. */
export const IDEMPOTENCY_KEYS_PER_CLIENT = 1000;
/** Rows read per query when streaming the whole collection. */
export const STREAM_SLICE_SIZE = 500;
/** Expired idempotency keys deleted per statement: a few milliseconds of store time each. */
export const KEY_SWEEP_BATCH_SIZE = 1000;

/**
 * A create made safe to retry: the key and who sent it (the key is that client's own, and each client keeps
 * at most `keysPerClient` keys), and a digest of the request it was first used for.
 */
export interface IdempotentRequest extends ClientKey {
  readonly fingerprint: string;
}

/** The operations on user records that both wire shapes share. */
export interface UserService {
  /** Resolves when the store can serve requests. */
  ready(): Promise<void>;
  create(fields: UserFields): Promise<User>;
  /** Creates at most once per key of a client; that client's retry gets the first response again (`replayed`). */
  createOnce<R>(fields: UserFields, request: IdempotentRequest, render: (user: User) => R): Promise<{ outcome: R; replayed: boolean }>;
  get(id: number): Promise<User>;
  /** Every user that matches, in the order, without holding the whole list in memory; and how many match. */
  list(filter: UserFilter, order: UserOrder): Promise<UserList>;
  /** How many users match (all users without a filter): exactly, or at least (see Tally). */
  count(filter?: UserFilter): Promise<Tally>;
  /** A page picked by number (from 1), of the users that match, in the order. */
  listPage(filter: UserFilter, order: UserOrder, page: number, perPage: number): Promise<UserPage>;
  /**
   * At most `limit` users that match, in the order, from a position (or the start); `more` says whether
   * others follow in the direction read (before the first user, when reading backwards), and `stoppedAt`
   * where a search that ran out of store time stopped (see UserSlice).
   */
  listFrom(filter: UserFilter, order: UserOrder, position: ListPosition | undefined, limit: number): Promise<UserSlice & { more: boolean }>;
  replace(id: number, fields: UserFields, condition?: VersionCondition): Promise<User>;
  /** Replaces the fields given and keeps the others (a merge patch), if the version meets the condition. */
  patch(id: number, changes: Partial<UserFields>, condition?: VersionCondition): Promise<User>;
  remove(id: number, condition?: VersionCondition): Promise<void>;
  /** Forgets idempotency keys past their time, in batches, until done or `stop` aborts; returns how many. */
  sweepExpiredKeys(stop?: AbortSignal): Promise<number>;
}

/** Returns the current instant; injectable so that tests can pin time. */
export type Clock = () => Date;

const systemClock: Clock = () => new Date();
const later = (from: Date, ms: number) => new Date(from.getTime() + ms).toISOString();

/**
 * The first response again, from the key's stored outcome: the user as the first request created it, rendered
 * by the retry, whose body is the first one's (the fingerprints match) and so renders the same response. Keys
 * stored before 2026-11-24 hold the rendered response itself; they expire within IDEMPOTENCY_KEY_TTL_MS.
 */
function replay<R>(stored: string, render: (user: User) => R): R {
  const outcome = JSON.parse(stored) as { created: User } | R;
  return typeof outcome === 'object' && outcome !== null && 'created' in outcome ? render(outcome.created) : (outcome as R);
}

/** Turns the outcome of a conditional change into its value, or the domain error it stands for. */
function settle<T>(id: number, result: ChangeResult<T>): T {
  if (result.outcome === 'missing') throw new UserNotFoundError(id);
  if (result.outcome === 'stale') throw new PreconditionFailedError(id, result.currentVersion);
  return result.value;
}

/** Settings of the user service. */
export interface UserServiceOptions {
  /** How long a create may hold its idempotency key before a retry may take it over. */
  readonly idempotencyLockMs?: number;
  /** How many idempotency keys one client keeps; its oldest beyond that are forgotten. */
  readonly keysPerClient?: number;
  readonly clock?: Clock;
}

/** Builds the user service over a repository. */
export function createUserService(repository: UserRepository, options: UserServiceOptions = {}): UserService {
  const { idempotencyLockMs = IDEMPOTENCY_LOCK_MS, keysPerClient = IDEMPOTENCY_KEYS_PER_CLIENT, clock = systemClock } = options;
  const now = () => clock().toISOString();

  /** Claims the key for `claim.owner`; returns the stored outcome instead when the key is done already. */
  async function holdKey(key: ClientKey, fingerprint: string, claim: KeyClaim) {
    const attempt = await repository.claimKey(key, fingerprint, claim, keysPerClient);
    if (attempt.claimed) return undefined;
    const { record } = attempt;
    if (record.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError();
    if (record.state === 'done') return record.outcome;
    // The holder may have died before finishing; once its lock has run out, this request may take over. If
    // the holder was only slow, it finds the key no longer its own when it commits (see createWithKey).
    if (record.lockedUntil > claim.now || !(await repository.takeOverKey(key, record.lockedUntil, claim))) {
      throw new IdempotencyKeyInFlightError();
    }
    return undefined;
  }

  return {
    ready: () => repository.ping(),
    create: (fields) => repository.create(fields, now()),
    async createOnce(fields, request, render) {
      const at = clock();
      // Only the key's name goes to the repository: its writes may cross to another process as data.
      const key = { client: request.client, key: request.key };
      const keyClaim = {
        owner: crypto.randomUUID(),
        now: at.toISOString(),
        lockedUntil: later(at, idempotencyLockMs),
        expiresAt: later(at, IDEMPOTENCY_KEY_TTL_MS),
      };
      const stored = await holdKey(key, request.fingerprint, keyClaim);
      if (stored != null) return { outcome: replay(stored, render), replayed: true };
      try {
        return { outcome: render(await repository.createWithKey(fields, keyClaim.now, key, keyClaim.owner)), replayed: false };
      } catch (error) {
        await repository.releaseKey(key, keyClaim.owner).catch(() => undefined);
        throw error;
      }
    },
    get: async (id) => {
      const user = await repository.findById(id);
      if (!user) throw new UserNotFoundError(id);
      return user;
    },
    list: (filter, order) => repository.list(filter, order, STREAM_SLICE_SIZE),
    count: (filter) => repository.count(filter),
    async listPage(filter, order, page, perPage) {
      if (page * perPage > NUMBERED_PAGES_REACH) {
        throw new InvalidParameterError(
          'page',
          `goes past the first ${NUMBERED_PAGES_REACH} users, as far as pages by number reach (page × per_page ≤ ${NUMBERED_PAGES_REACH}); go deeper by following the links next and last, whose cursors cost the same at any depth`,
        );
      }
      // One more than the page holds says whether another follows. The common page (all users, by id) comes
      // with its total from one statement; others count their matches apart.
      const offset = (page - 1) * perPage;
      const { users, stoppedAt, total, exact, stoppedShort } =
        unfiltered(filter) && byIdOnly(order)
          ? { ...(await repository.listSlice(offset, perPage + 1)), exact: true, stoppedShort: undefined }
          : { ...(await repository.listAt(filter, order, offset, perPage + 1)), ...(await repository.count(filter)) };
      const more = users.length > perPage || stoppedAt !== undefined;
      return {
        users: users.slice(0, perPage),
        more,
        ...(stoppedAt && { stoppedAt }),
        page,
        perPage,
        total,
        exact,
        ...(stoppedShort && { stoppedShort }),
        totalPages: Math.ceil(total / perPage),
      };
    },
    async listFrom(filter, order, position, limit) {
      const { users, stoppedAt } = await repository.listFrom(filter, order, position, limit + 1);
      if (stoppedAt !== undefined) return { users, more: true, stoppedAt };
      if (users.length <= limit) return { users, more: false };
      // Read backwards, the one too many is the first.
      return { users: position !== undefined && 'before' in position ? users.slice(1) : users.slice(0, limit), more: true };
    },
    replace: async (id, fields, condition = 'any') => settle(id, await repository.replace(id, fields, now(), condition)),
    patch: async (id, changes, condition = 'any') => settle(id, await repository.patch(id, changes, now(), condition)),
    remove: async (id, condition = 'any') => settle(id, await repository.delete(id, condition)),
    async sweepExpiredKeys(stop) {
      // One DELETE of 1M expired keys held the event loop (and SQLite's write lock) for 7 s at start-up.
      const at = now();
      let swept = 0;
      for (;;) {
        const deleted = await repository.deleteExpiredKeys(at, KEY_SWEEP_BATCH_SIZE);
        swept += deleted;
        if (deleted < KEY_SWEEP_BATCH_SIZE || stop?.aborted) return swept;
        await nextTurn();
      }
    },
  };
}
