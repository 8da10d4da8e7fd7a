import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../logger.js';
import type { Metrics } from './metrics.js';

/** A client's request id is kept only when it is short and plain, so it cannot forge log lines. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Polled by orchestrators every few seconds: logged at debug, not info. */
const QUIET_OPERATIONS = new Set(['getHealth', 'getReadiness', 'getMetrics']);

/**
 * Outermost middleware: gives every request an id (`X-Request-Id`, the client's when well-formed), then
 * logs it and records its duration once it is answered. Never logs headers, so no credential reaches a log.
 */
export function observability(logger: Logger, metrics: Metrics): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const given = ctx.get('x-request-id');
    const requestId = REQUEST_ID.test(given) ? given : randomUUID();
    ctx.set('X-Request-Id', requestId);
    logger.debug({ requestId, method: ctx.method, path: ctx.path }, 'request received');
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const operationId: string = ctx.state.operationId ?? 'none';
      metrics.observe({ operationId, method: ctx.method, status: ctx.status }, seconds);
      if (ctx.status === 503) metrics.storeUnavailable();
      const entry = { requestId, method: ctx.method, path: ctx.path, operationId, status: ctx.status, durationMs: Math.round(seconds * 1e5) / 100 };
      if (QUIET_OPERATIONS.has(operationId)) logger.debug(entry, 'request');
      else logger.info(entry, 'request');
    }
  };
}
