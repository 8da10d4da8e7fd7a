import type { Middleware } from 'koa';
import type { LatencyRange } from '../../config.js';
import type { Contract } from '../contract/contract.js';
import { abandonment } from '../routing/abandonment.js';
import { queryOf } from '../routing/query-string.js';
import { answerDelay, hold } from './answer-delay.js';

// The sandbox's delay in Koa (mounted only in sandbox mode); `Prefer` is answered in each operation's
// pipeline (routing/operation-pipeline.ts).

/** Holds back every answer, problems included; a `delay` out of range is refused (400) at once. */
export function delayedAnswers(contract: Contract, latency: LatencyRange): Middleware {
  const delayOf = answerDelay(contract, latency);
  return async (ctx, next) => {
    const ms = delayOf(queryOf(ctx));
    try {
      await next();
    } finally {
      if (ms > 0) await hold(ms, abandonment(ctx.res));
    }
  };
}
