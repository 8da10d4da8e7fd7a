import type { Middleware } from 'koa';
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { Logger } from '../../logger.js';
import { HttpProblem } from '../errors/problem.js';
import type { Metrics } from '../observability/metrics.js';
import { CountsUnavailableError, secondsLeft } from './bounded-counter.js';
import type { Limiters } from './limiter-store.js';

const WINDOW_SECONDS = 60;

/**
 * Limits the creates, replaces and deletes of one client (`ctx.state.client`) to `perMinute` per fixed
 * minute, so that no anonymous client can fill the store. Every answer to a write that was counted carries
 * the RateLimit-Policy / RateLimit fields of draft-ietf-httpapi-ratelimit-headers (policy "writes": quota
 * `q` per window `w` seconds; `r` remaining, `t` seconds until the quota resets), so that a client can pace
 * itself before it is refused; refusals are 429 with `Retry-After` too. Undefined when disabled (0).
 *
 * A write whose count cannot be had in time (the shared store failed, or is slower than its timeout) is refused
 * with 503 and `Retry-After`, as a credential check is: admitted uncounted, a burst that outruns the store would
 * pass the limit, and counted elsewhere, the count would split. Refused before it begins, it is never made.
 */
export function writeLimit(perMinute: number, limiters: Limiters, metrics: Metrics, logger: Logger): Middleware | undefined {
  if (perMinute === 0) return undefined;
  const limiter = limiters.create({ keyPrefix: 'writes', points: perMinute, durationSeconds: WINDOW_SECONDS });
  const policy = `"writes";q=${perMinute};w=${WINDOW_SECONDS}`;
  return async (ctx, next) => {
    const client: string = ctx.state.client;
    let counted: RateLimiterRes;
    try {
      counted = await limiter.consume(client);
    } catch (outcome) {
      if (outcome instanceof CountsUnavailableError) {
        metrics.limitStoreUnavailable('writes');
        throw new HttpProblem('store-unavailable', "The count of this client's writes cannot be read in time; nothing was changed. Try again in 1 second.", {
          headers: { 'Retry-After': '1' },
        });
      }
      // Anything else that is not the counts is a server fault, not a limit.
      if (!(outcome instanceof RateLimiterRes)) throw outcome;
      const seconds = secondsLeft(outcome);
      metrics.limited('writes');
      if (outcome.consumedPoints === perMinute + 1) logger.warn({ client, perMinute }, 'client reached the write rate limit');
      throw new HttpProblem('too-many-writes', `Too many writes from this client; try again in ${seconds} seconds (RateLimit-Policy names the limit).`, {
        headers: { 'Retry-After': String(seconds), 'RateLimit-Policy': policy, RateLimit: `"writes";r=0;t=${seconds}` },
      });
    }
    // Set before the operation runs, so that its problems (400, 404, 412, 413, 415, 422) carry them too.
    ctx.set('RateLimit-Policy', policy);
    ctx.set('RateLimit', `"writes";r=${counted.remainingPoints};t=${secondsLeft(counted)}`);
    return next();
  };
}
