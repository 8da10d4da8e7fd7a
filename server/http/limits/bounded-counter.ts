import { RateLimiterRes } from 'rate-limiter-flexible';
import type { Logger } from '../../logger.js';

/** The calls the limits make on a per-client counter (a rate-limiter-flexible limiter has them all). */
export interface Counter {
  consume(key: string): Promise<RateLimiterRes>;
  get(key: string): Promise<RateLimiterRes | null>;
  penalty(key: string): Promise<RateLimiterRes>;
  reward(key: string, points: number): Promise<RateLimiterRes>;
  delete(key: string): Promise<boolean>;
}

/** Whole seconds until a count's window ends, at least 1: what `Retry-After` and a RateLimit field's `t` say. */
export const secondsLeft = (count: RateLimiterRes): number => Math.max(1, Math.ceil(count.msBeforeNext / 1000));

/**
 * The shared store of the counts did not answer a call in time, or failed: the limit cannot tell whether the
 * client has a point left, so what it guards is refused (see docs/decisions/limit-counts-in-one-store.md).
 */
export class CountsUnavailableError extends Error {
  constructor(options?: ErrorOptions) {
    super('the shared store of the per-client counts did not answer in time', options);
    this.name = 'CountsUnavailableError';
  }
}

class SharedStoreTimeout extends Error {
  constructor(ms: number) {
    super(`the shared rate-limit store did not answer within ${ms} ms`);
  }
}

/** An outage of the shared store is logged at most this often, with the calls that failed since its last line. */
const LOG_INTERVAL_MS = 10_000;

/** Whether the shared store answers, shared by every counter of one server: what its outages are logged as. */
export interface SharedStoreHealth {
  readonly timeoutMs: number;
  failed(error: unknown): void;
  answered(): void;
}

/**
 * Logs the outages of the shared store: a `warn` line when calls start failing, at most one per
 * LOG_INTERVAL_MS (a burst that outruns the store fails calls between its answers, and must not flood the log),
 * and an `info` line when it answers after such a line. `onFailure` lets the store drop a connection that may
 * answer late or never.
 */
export function sharedStoreHealth(store: string, timeoutMs: number, report: { logger: Logger }, onFailure = (_timedOut: boolean) => {}): SharedStoreHealth {
  let reported = false;
  let lastLine = -Infinity;
  let unreported = 0;
  return {
    timeoutMs,
    failed(error) {
      onFailure(error instanceof SharedStoreTimeout);
      unreported++;
      if (performance.now() - lastLine < LOG_INTERVAL_MS) return;
      report.logger.warn(
        { store, message: (error as Error).message, failedSinceLastLine: unreported - 1 },
        'shared rate-limit store unavailable; credential checks and writes that need it are refused (503) until it answers',
      );
      [reported, lastLine, unreported] = [true, performance.now(), 0];
    },
    answered() {
      if (!reported) return;
      reported = false;
      report.logger.info({ store }, 'shared rate-limit store answers again');
    },
  };
}

/**
 * `work`, or a SharedStoreTimeout once `ms` have passed. Timers run before the event loop reads its sockets:
 * after a turn that a burst of requests kept busy past `ms`, an answer that arrived in time is still unread.
 * The timeout waits for that read (setImmediate runs after it) and refuses only a call still unanswered.
 */
function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => setImmediate(() => reject(new SharedStoreTimeout(ms))), ms)));
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * A counter of the shared store whose every call answers within the store's timeout: a store that fails or is
 * slower rejects it with CountsUnavailableError. Nothing is counted anywhere else meanwhile: a count split
 * between stores, with points taken in one and given back in the other, is no limit at all.
 */
export function boundedCounter(shared: Counter, health: SharedStoreHealth): Counter {
  async function call<T>(operation: (counter: Counter) => Promise<T>): Promise<T> {
    try {
      const result = await withTimeout(operation(shared), health.timeoutMs);
      health.answered();
      return result;
    } catch (error) {
      // A limiter refuses by rejecting with the counts: the store answered.
      if (error instanceof RateLimiterRes) {
        health.answered();
        throw error;
      }
      health.failed(error);
      throw new CountsUnavailableError({ cause: error });
    }
  }
  return {
    consume: (key) => call((counter) => counter.consume(key)),
    get: (key) => call((counter) => counter.get(key)),
    penalty: (key) => call((counter) => counter.penalty(key)),
    reward: (key, points) => call((counter) => counter.reward(key, points)),
    delete: (key) => call((counter) => counter.delete(key)),
  };
}
