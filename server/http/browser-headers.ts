import cors from '@koa/cors';
import type { Middleware } from 'koa';
import helmet from 'koa-helmet';

/** Headers a browser may read from a cross-origin response, beyond the CORS-safelisted ones. */
const EXPOSED = ['ETag', 'Location', 'Retry-After', 'WWW-Authenticate', 'X-Request-Id', 'Idempotent-Replayed'];
/** Request headers a cross-origin caller may send. */
const ALLOWED = ['Authorization', 'Content-Type', 'If-Match', 'Idempotency-Key', 'X-Request-Id', 'x-custom-header', 'Custom-Header', 'Prefer'];

/**
 * Security headers on every response (helmet, with a policy for an API that serves no pages) and
 * `Cache-Control: no-store`: user records and problems are never to be cached by intermediaries.
 */
export function securityHeaders(): Middleware {
  const headers = helmet({
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    frameguard: { action: 'deny' },
  });
  return async (ctx, next) => {
    ctx.set('Cache-Control', 'no-store');
    await headers(ctx, next);
  };
}

/** CORS for the listed browser origins only, with preflight; other origins get no CORS headers at all. */
export function corsFor(origins: readonly string[]): Middleware {
  const allowed = new Set(origins);
  return cors({
    origin: (ctx) => (allowed.has(ctx.get('Origin')) ? ctx.get('Origin') : ''),
    allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS'],
    allowHeaders: ALLOWED,
    exposeHeaders: EXPOSED,
    maxAge: 600,
  });
}
