import { RateLimiterPostgres, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { StoreTimeouts } from '../../config.js';
import type { PoolMode } from '../../config-settings.js';
import { createPostgresPool, type ConnectionFault } from './pool.js';

/** What one shared counter counts: `points` per key within `duration` seconds, its keys starting `keyPrefix:`. */
export interface CounterOptions {
  readonly keyPrefix: string;
  readonly points: number;
  readonly duration: number;
}

/** The counters every instance on this store shares, over connections of their own that `close` ends. */
export interface OpenCounts {
  counter(options: CounterOptions): RateLimiterAbstract;
  close(): Promise<void>;
}

/** Opens the shared counts, each of their calls to be answered within `timeoutMs`; see http/limits/limiter-store.ts. */
export type SharedCounts = (timeoutMs: number) => OpenCounts;

/** The table of migration 2026-11-23-03, in the schema search_path selects (as every other table). */
const TABLE = 'rate_limits';

/**
 * Connections of each process that only the counts use. Sharing the requests' pool, a burst of guesses would
 * hold every connection with its own counts, and a burst of searches would keep the counts from any: a count
 * that waits past its timeout refuses a login. With the session below, a few carry as many counts a second as
 * ten; four, not two, so that a logged-in client's requests, which each read two counts, are served as fast as
 * on the requests' pool (docs/decisions/limit-counts-in-one-store.md).
 */
const COUNT_CONNECTIONS = 4;

/**
 * A count's commit does not wait for PostgreSQL to flush its log: the counts of the last moments before a crash
 * of the database may be forgotten, in exchange for a count that does not wait for the disk (measured in
 * docs/decisions/limit-counts-in-one-store.md).
 */
const COUNT_SESSION = { synchronous_commit: 'off' };

/**
 * Counters in the store's rate_limits table, on a watched pool of their own (a connection that fails there is
 * discarded like any other). Nothing of a call outlives its timeout: the wait for a connection, and the
 * statement itself (statement_timeout, a cancel by the server that rolls it back), are bounded by it, so that
 * a point the caller was told it could not have is not taken later. The migration made the table, so the
 * limiter never issues its racy CREATE.
 */
export function postgresCounts(url: string, mode: PoolMode, timeouts: StoreTimeouts, onFault: ConnectionFault): SharedCounts {
  return (timeoutMs) => {
    const pool = createPostgresPool(url, COUNT_CONNECTIONS, { ...timeouts, statementMs: timeoutMs, connectMs: timeoutMs }, onFault, mode, COUNT_SESSION);
    return {
      // rate-limiter-flexible calls `query` on a 'pool' store client, once per statement.
      counter: (options) => new RateLimiterPostgres({ ...options, storeClient: pool, storeType: 'pool', tableName: TABLE, tableCreated: true }),
      close: () => pool.end(),
    };
  };
}
