import cluster from 'node:cluster';
import type { Redis } from 'ioredis';
import { RateLimiterCluster, RateLimiterClusterMaster, RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import type { Config } from '../../config.js';
import type { SharedCounts } from '../../db/postgres/counts.js';
import type { Logger } from '../../logger.js';
import { boundedCounter, sharedStoreHealth, type Counter, type SharedStoreHealth } from './bounded-counter.js';

export type { Counter } from './bounded-counter.js';

/** What one counter counts: `points` per key within `durationSeconds`, under a prefix of its own. */
export interface LimiterSettings {
  readonly keyPrefix: string;
  readonly points: number;
  readonly durationSeconds: number;
}

/** Where the per-client counts live: Redis, the store, the cluster primary, or this process alone. */
export type LimitStore = 'redis' | 'database' | 'cluster' | 'memory';

/** Makes the counters of one server; all share one store, whose connection `close` ends. */
export interface Limiters {
  readonly store: LimitStore;
  create(settings: LimiterSettings): Counter;
  close(): Promise<void>;
}

/** Runs in the cluster primary: holds the counts of every worker when the deployment has no shared store. */
export function serveClusterLimits(): void {
  new RateLimiterClusterMaster();
}

interface Deps {
  readonly logger: Logger;
}

type Shared = (options: { keyPrefix: string; points: number; duration: number }) => Counter;

/**
 * Opens Redis, waiting for it a second (or the timeout) at most: a Redis that is down must not keep the
 * service from starting. Until it answers, what the limits guard is refused.
 */
async function openRedis(url: string, timeoutMs: number, { logger }: Deps): Promise<Redis> {
  const waitMs = Math.max(1000, timeoutMs);
  // Loaded only here: a deployment without REDIS_URL never loads the client.
  const { Redis } = await import('ioredis');
  // Without the offline queue a command fails at once while Redis is unreachable, instead of piling up. A
  // command still unanswered when its connection closes fails with it, and is never sent again on the next:
  // its caller may have been refused already, and a point taken then would be one nobody asked for.
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, autoResendUnfulfilledCommands: false, connectTimeout: waitMs });
  // Connection errors surface through the calls (and the health's one log line per outage).
  redis.on('error', () => {});
  let timer: NodeJS.Timeout | undefined;
  const ready = await new Promise<boolean>((resolve) => {
    redis.once('ready', () => resolve(true));
    timer = setTimeout(resolve, waitMs, false);
  });
  clearTimeout(timer);
  if (!ready) logger.warn('Redis (REDIS_URL) is not reachable yet; credential checks and writes are refused (503) until it is');
  return redis;
}

/** The counts of every process, and how this one reaches them. */
interface SharedStore {
  readonly store: LimitStore;
  readonly counts: Shared | undefined;
  readonly health: SharedStoreHealth;
  close(): Promise<void>;
}

async function redisStore(url: string, timeoutMs: number, deps: Deps): Promise<SharedStore> {
  const redis = await openRedis(url, timeoutMs, deps);
  // A command that timed out may still be answered; on the same connection that answer would be taken as
  // the next command's. A connection still not ready (its ready check unanswered, as through a blackhole)
  // may never be. Reconnecting drops the connection and fails what was waiting on it.
  const reconnect = (timedOut: boolean) => (timedOut || redis.status === 'connect') && redis.disconnect(true);
  return {
    store: 'redis',
    counts: (options) => new RateLimiterRedis({ ...options, storeClient: redis }),
    health: sharedStoreHealth('redis', timeoutMs, deps, reconnect),
    close: async () => redis.disconnect(),
  };
}

/** Redis when REDIS_URL is set; else the store when every instance shares it; else the cluster primary. */
async function sharedStore(config: Config, storeCounts: SharedCounts | undefined, deps: Deps): Promise<SharedStore> {
  const { redisUrl, timeoutMs } = config.sharedLimits;
  if (redisUrl !== undefined) return redisStore(redisUrl, timeoutMs, deps);
  if (storeCounts !== undefined) {
    const { counter, close } = storeCounts(timeoutMs);
    return { store: 'database', counts: counter, health: sharedStoreHealth('database', timeoutMs, deps), close };
  }
  const [store, counts]: [LimitStore, Shared | undefined] =
    config.workers > 1 && cluster.isWorker ? ['cluster', (options) => new RateLimiterCluster({ ...options, timeoutMs })] : ['memory', undefined];
  return { store, counts, health: sharedStoreHealth(store, timeoutMs, deps), close: async () => {} };
}

/**
 * The one place that chooses where per-client counters live, so that a limit counts once per client for the
 * whole deployment: Redis when REDIS_URL is set; else the store when every instance shares it (PostgreSQL);
 * else the cluster primary when WORKERS > 1; else this process. A count lives in that one store: a call it
 * cannot answer in time fails (bounded-counter.ts), and is never counted elsewhere.
 */
export async function createLimiters(config: Config, storeCounts: SharedCounts | undefined, deps: Deps): Promise<Limiters> {
  const { store, counts, health, close } = await sharedStore(config, storeCounts, deps);
  deps.logger.info({ limitStore: store }, 'per-client limits are counted in this store');
  const create = ({ keyPrefix, points, durationSeconds }: LimiterSettings): Counter => {
    if (counts === undefined) return new RateLimiterMemory({ keyPrefix, points, duration: durationSeconds });
    return boundedCounter(counts({ keyPrefix: `${config.sharedLimits.keyPrefix}:${keyPrefix}`, points, duration: durationSeconds }), health);
  };
  return { store, create, close };
}
