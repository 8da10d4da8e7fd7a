import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Middleware } from 'koa';
import type { Logger } from '../../logger.js';
import type { Tracing } from '../../tracing.js';
import { accessLog } from './access-log.js';
import type { ProblemKind } from '../errors/problem.js';
import type { Metrics } from './metrics.js';

/** A client's request id is kept only when it is short and plain, so it cannot forge log lines. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Polled by orchestrators every few seconds: logged at debug, not info. */
const QUIET_OPERATIONS = new Set(['getHealth', 'getReadiness', 'getMetrics']);

/**
 * Outermost middleware: gives every request an id (`X-Request-Id`, the client's when well-formed) and, when
 * tracing is on, a span (continuing the caller's W3C `traceparent`, and returning this span's); then logs
 * it and records its duration once it is answered. Never logs headers, so no credential reaches a log.
 */
export function observability(logger: Logger, metrics: Metrics, tracing: Tracing): Middleware {
  const logRequest = accessLog(logger);
  return async (ctx, next) => {
    const started = performance.now();
    const given = ctx.get('x-request-id');
    const requestId = REQUEST_ID.test(given) ? given : randomUUID();
    ctx.set('X-Request-Id', requestId);
    if (logger.isLevelEnabled('debug')) logger.debug({ requestId, method: ctx.method, path: ctx.path }, 'request received');
    const span = tracing.startRequest(ctx.method, ctx.req.headers);
    if (span) ctx.set('traceparent', span.traceparent);
    try {
      await (span ? span.run(next) : next());
    } finally {
      const milliseconds = performance.now() - started;
      const operationId: string = ctx.state.operationId ?? 'none';
      const { method, status } = ctx;
      metrics.observe(operationId, method, status, milliseconds / 1000);
      // A 503 is an outage unless it is a refusal of load on purpose, which its own counter counts where it
      // is decided (a full queue of password checks) or here (a full queue of searches).
      const problem = ctx.state.problem as ProblemKind | undefined;
      if (status === 503 && (problem === undefined || problem === 'store-unavailable')) metrics.storeUnavailable();
      else if (problem === 'write-outcome-unknown') metrics.writeOutcomeUnknown();
      else if (problem === 'searches-busy') metrics.limited(ctx.state.searchRefusal === 'client-share' ? 'search_client_share' : 'search_queue_full');
      span?.end(operationId, ctx.state.route, status);
      const entry = { requestId, traceId: span?.traceId, method, path: ctx.path, operationId, status, durationMs: Math.round(milliseconds * 100) / 100 };
      logRequest(entry, QUIET_OPERATIONS.has(operationId));
    }
  };
}
