import type { Middleware } from 'koa';
import type { RouteDefinition } from '../../../generated/routes.js';
import type { LatencyRange } from '../../config.js';
import type { Contract } from '../contract/contract.js';
import { abandonment } from '../routing/abandonment.js';
import { queryOf } from '../routing/query-string.js';
import { contentTypeOf } from '../routing/replies.js';
import { answerDelay, hold } from './answer-delay.js';
import { examplePicker } from './preferred-example.js';

// The sandbox's controls in Koa (mounted only in sandbox mode): the answer's delay, and Prefer.

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

/** Answers the example a Prefer header asks for, or passes the request on when it asks for none. */
export function preferredExample(contract: Contract, route: RouteDefinition): Middleware {
  const pick = examplePicker(contract, route);
  return (ctx, next) => {
    const prefer = ctx.get('Prefer');
    const answer = prefer === '' ? undefined : pick(prefer);
    if (!answer) return next();
    ctx.status = answer.status;
    ctx.set(answer.headers);
    if (answer.body === undefined) return;
    // As a header, not through ctx.type, which would add a charset to JSON.
    ctx.set('Content-Type', contentTypeOf(answer.mediaType!));
    ctx.body = answer.body;
  };
}
