import { RateLimiterRes } from 'rate-limiter-flexible';
import type { Logger } from '../../logger.js';
import type { Metrics } from '../observability/metrics.js';

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

/** How long after a failure the shared store is left alone: no request waits out its timeout meanwhile. */
export const RETRY_SHARED_MS = 2000;

class SharedStoreTimeout extends Error {
  constructor(ms: number) {
    super(`the shared rate-limit store did not answer within ${ms} ms`);
  }
}

/** Whether the shared store answers, shared by every counter of one server; logs once per outage. */
export interface SharedStoreHealth {
  readonly timeoutMs: number;
  readonly available: () => boolean;
  failed(error: unknown): void;
  answered(): void;
}

/** Tracks the shared store; `onFailure` lets the store drop a connection that may answer late or never. */
export function sharedStoreHealth(store: string, timeoutMs: number, report: { logger: Logger }, onFailure = (_timedOut: boolean) => {}): SharedStoreHealth {
  let down = false;
  let retryAt = 0;
  return {
    timeoutMs,
    available: () => !down || Date.now() >= retryAt,
    failed(error) {
      onFailure(error instanceof SharedStoreTimeout);
      retryAt = Date.now() + RETRY_SHARED_MS;
      if (down) return;
      down = true;
      report.logger.warn({ store, message: (error as Error).message }, 'shared rate-limit store unavailable; each process counts alone until it answers');
    },
    answered() {
      if (!down) return;
      down = false;
      report.logger.info({ store }, 'shared rate-limit store answers again; counts are shared again');
    },
  };
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new SharedStoreTimeout(ms)), ms)));
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * A shared counter that a failing or slow shared store cannot stall or open: each call is bounded by the
 * timeout, and when the store fails (or failed less than RETRY_SHARED_MS ago) the call goes to `insurance`,
 * this process's own count. The limits then hold per process, as before they were shared: neither closed
 * (refusing every login and write while the store is down) nor open (no limit at all).
 */
export function insuredCounter(shared: Counter, insurance: Counter, health: SharedStoreHealth, metrics: Metrics): Counter {
  async function call<T>(operation: (counter: Counter) => Promise<T>): Promise<T> {
    if (!health.available()) return local(operation);
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
      return local(operation);
    }
  }
  const local = <T>(operation: (counter: Counter) => Promise<T>) => {
    metrics.limitCountedLocally();
    return operation(insurance);
  };
  return {
    consume: (key) => call((counter) => counter.consume(key)),
    get: (key) => call((counter) => counter.get(key)),
    penalty: (key) => call((counter) => counter.penalty(key)),
    reward: (key, points) => call((counter) => counter.reward(key, points)),
    delete: (key) => call((counter) => counter.delete(key)),
  };
}
