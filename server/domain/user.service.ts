import {
  IdempotencyKeyInFlightError,
  IdempotencyKeyReusedError,
  PreconditionFailedError,
  UserNotFoundError,
} from './errors.js';
import type { ChangeResult, UserRepository, VersionCondition } from './user-repository.js';
import type { User, UserFields, UserPage } from './user.js';

/** How long a create may hold its idempotency key before a retry may take it over. */
export const IDEMPOTENCY_LOCK_MS = 30_000;
/** How long an idempotency key and its stored response are kept. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;
/** Rows read per query when streaming the whole collection. */
export const STREAM_SLICE_SIZE = 500;

/** A create made safe to retry: the key, and a digest of the request it was first used for. */
export interface IdempotentRequest {
  readonly key: string;
  readonly fingerprint: string;
}

/** The operations on user records that both wire shapes share. */
export interface UserService {
  /** Resolves when the store can serve requests. */
  ready(): Promise<void>;
  create(fields: UserFields): Promise<User>;
  /** Creates at most once per key; a retry gets the first response again (`replayed`). */
  createOnce<R>(fields: UserFields, request: IdempotentRequest, render: (user: User) => R): Promise<{ outcome: R; replayed: boolean }>;
  get(id: number): Promise<User>;
  /** Every user in id order, without holding the whole collection in memory. */
  streamAll(): AsyncIterable<User>;
  listPage(page: number, perPage: number): Promise<UserPage>;
  replace(id: number, fields: UserFields, condition?: VersionCondition): Promise<User>;
  remove(id: number, condition?: VersionCondition): Promise<void>;
  /** Forgets idempotency keys past their time; returns how many. */
  sweepExpiredKeys(): Promise<number>;
}

/** Returns the current instant; injectable so that tests can pin time. */
export type Clock = () => Date;

const systemClock: Clock = () => new Date();
const later = (from: Date, ms: number) => new Date(from.getTime() + ms).toISOString();

/** Turns the outcome of a conditional change into its value, or the domain error it stands for. */
function settle<T>(id: number, result: ChangeResult<T>): T {
  if (result.outcome === 'missing') throw new UserNotFoundError(id);
  if (result.outcome === 'stale') throw new PreconditionFailedError(id, result.currentVersion);
  return result.value;
}

/** Builds the user service over a repository. */
export function createUserService(repository: UserRepository, clock: Clock = systemClock): UserService {
  const now = () => clock().toISOString();

  async function claim(request: IdempotentRequest, at: Date) {
    const times = { now: at.toISOString(), lockedUntil: later(at, IDEMPOTENCY_LOCK_MS), expiresAt: later(at, IDEMPOTENCY_KEY_TTL_MS) };
    const attempt = await repository.claimKey(request.key, request.fingerprint, times);
    if (attempt.claimed) return undefined;
    const { record } = attempt;
    if (record.fingerprint !== request.fingerprint) throw new IdempotencyKeyReusedError();
    if (record.state === 'done') return record.outcome;
    // The holder may have died before finishing; once its lock has run out, this request may take over.
    if (record.lockedUntil > times.now || !(await repository.takeOverKey(request.key, record.lockedUntil, times.lockedUntil))) {
      throw new IdempotencyKeyInFlightError();
    }
    return undefined;
  }

  return {
    ready: () => repository.ping(),
    create: (fields) => repository.create(fields, now()),
    async createOnce(fields, request, render) {
      const at = clock();
      const stored = await claim(request, at);
      if (stored != null) return { outcome: JSON.parse(stored) as Awaited<ReturnType<typeof render>>, replayed: true };
      try {
        return { outcome: await repository.createWithKey(fields, at.toISOString(), request.key, render), replayed: false };
      } catch (error) {
        await repository.releaseKey(request.key).catch(() => undefined);
        throw error;
      }
    },
    get: async (id) => {
      const user = await repository.findById(id);
      if (!user) throw new UserNotFoundError(id);
      return user;
    },
    streamAll: () => repository.streamAll(STREAM_SLICE_SIZE),
    async listPage(page, perPage) {
      const { users, total } = await repository.listSlice((page - 1) * perPage, perPage);
      return { users, page, perPage, total, totalPages: Math.ceil(total / perPage) };
    },
    replace: async (id, fields, condition = 'any') => settle(id, await repository.replace(id, fields, now(), condition)),
    remove: async (id, condition = 'any') => settle(id, await repository.delete(id, condition)),
    sweepExpiredKeys: () => repository.deleteExpiredKeys(now()),
  };
}
