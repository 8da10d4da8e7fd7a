import type { LatencyRange } from '../../config-defaults.js';
import type { Contract, Parameter } from '../contract/contract.js';
import { compileParameterCheck, type RawRequest } from '../contract/request-validation.js';

// Sandbox only: every answer is held back for SANDBOX_LATENCY_MS, or for the request's own `delay` seconds,
// so that a frontend sees its loading states. The wait is bounded (10 s) and ends early when the client goes.
// Browser-safe: the MSW handlers read `delay` with it too; sandbox-middleware.ts applies it in Koa.

const drawn = ({ min, max }: LatencyRange) => min + Math.round(Math.random() * (max - min));

/** How long to hold an answer back: the request's `delay` (checked as the contract says; 400 otherwise), or the latency. */
export function answerDelay(contract: Contract, latency: LatencyRange): (query: RawRequest['query']) => number {
  const check = compileParameterCheck(contract, [contract.resolve<Parameter>({ $ref: '#/components/parameters/SandboxDelay' })], 'query');
  return (query) => {
    const { delay } = check(query) as { delay?: number };
    return delay === undefined ? drawn(latency) : Math.round(delay * 1000);
  };
}

/** Waits `ms`, or until `signal` aborts (the client went away), whichever comes first. */
export function hold(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0 || signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}
