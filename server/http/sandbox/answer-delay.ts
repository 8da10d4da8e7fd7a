import type { Context, Middleware } from 'koa';
import type { LatencyRange } from '../../config.js';
import type { Contract, Parameter } from '../contract/contract.js';
import { compileParameterCheck } from '../contract/request-validation.js';

// Sandbox only: every answer is held back for SANDBOX_LATENCY_MS, or for the request's own `delay` seconds,
// so that a frontend sees its loading states. The wait is bounded (10 s) and ends early when the client goes.

const drawn = ({ min, max }: LatencyRange) => min + Math.round(Math.random() * (max - min));

/** Waits `ms`, or until the client closes the connection, whichever comes first. */
function hold(ctx: Context, ms: number): Promise<void> {
  return new Promise((resolve) => {
    if (ctx.res.closed) return resolve();
    const done = () => {
      clearTimeout(timer);
      ctx.res.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    ctx.res.once('close', done);
  });
}

/** Holds back every answer, problems included; a `delay` out of range is refused (400) at once. */
export function answerDelay(contract: Contract, latency: LatencyRange): Middleware {
  const check = compileParameterCheck(contract, [contract.resolve<Parameter>({ $ref: '#/components/parameters/SandboxDelay' })], 'query');
  return async (ctx, next) => {
    const { delay } = check(ctx.query) as { delay?: number };
    const ms = delay === undefined ? drawn(latency) : Math.round(delay * 1000);
    try {
      await next();
    } finally {
      if (ms > 0) await hold(ctx, ms);
    }
  };
}
