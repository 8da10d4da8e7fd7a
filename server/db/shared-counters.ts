import { RateLimiterPostgres, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { WatchedPool } from './postgres-pool.js';

/** What one shared counter counts: `points` per key within `duration` seconds, its keys starting `keyPrefix:`. */
export interface CounterOptions {
  readonly keyPrefix: string;
  readonly points: number;
  readonly duration: number;
}

/** Makes counters that every instance on this store shares; see http/limits/limiter-store.ts. */
export type SharedCounters = (options: CounterOptions) => RateLimiterAbstract;

/** The table of migration 2026-11-23-03, in the schema search_path selects (as every other table). */
const TABLE = 'rate_limits';

/**
 * Counters in the store's rate_limits table, on the service's own watched pool: a connection that fails there
 * is discarded like any other. The migration made the table, so the limiter never issues its racy CREATE.
 */
export function postgresCounters(pool: WatchedPool): SharedCounters {
  // rate-limiter-flexible calls `query` on a 'pool' store client, once per statement.
  return (options) => new RateLimiterPostgres({ ...options, storeClient: pool, storeType: 'pool', tableName: TABLE, tableCreated: true });
}
