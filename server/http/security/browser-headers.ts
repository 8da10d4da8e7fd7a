import cors from '@koa/cors';
import type { Middleware } from 'koa';
import helmet from 'koa-helmet';
import { ALLOWED, EXPOSED, LOCAL_ORIGIN, METHODS, PREFLIGHT_MAX_AGE } from './cors-policy.js';

/**
 * The security headers of every response, fixed once: what the OWASP REST Security Cheat Sheet asks of a
 * JSON API. Nothing it answers may be cached, framed, sniffed as another type, embedded by other sites or
 * leak a referrer. Headers that only mean something to HTML documents (helmet's others) are sent by /docs.
 */
export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Cache-Control': 'no-store',
  'Content-Security-Policy': "default-src 'none';frame-ancestors 'none'",
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Referrer-Policy': 'no-referrer',
  'Strict-Transport-Security': 'max-age=31536000; includeSubDomains',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
};

/** Sets the API security headers on every response; pages may widen them (see documentHeaders). */
export const securityHeaders: Middleware = (ctx, next) => {
  ctx.set(API_SECURITY_HEADERS);
  return next();
};

/** helmet's full set for HTML documents, with the page's own Content-Security-Policy. */
export const documentHeaders = (contentSecurityPolicy: Readonly<Record<string, string[]>>): Middleware =>
  helmet({ contentSecurityPolicy: { useDefaults: false, directives: contentSecurityPolicy }, frameguard: { action: 'deny' } });

/**
 * CORS for the listed browser origins only (and, in sandbox mode, any local development origin), with
 * preflight; other origins get no CORS headers at all. Every response varies by Origin. Requests without an
 * Origin (not from a browser's cross-origin fetch) skip the CORS machinery: an await and a header parse that
 * are a measurable share of a GET.
 */
export function corsFor(origins: readonly string[], { localDevelopment = false } = {}): Middleware {
  const allowed = new Set(origins);
  const admits = (origin: string) => allowed.has(origin) || (localDevelopment && LOCAL_ORIGIN.test(origin));
  const handle = cors({
    origin: (ctx) => (admits(ctx.get('Origin')) ? ctx.get('Origin') : ''),
    allowMethods: METHODS,
    allowHeaders: ALLOWED,
    exposeHeaders: EXPOSED,
    maxAge: PREFLIGHT_MAX_AGE,
  });
  return (ctx, next) => {
    if (ctx.req.headers.origin !== undefined) return handle(ctx, next);
    ctx.vary('Origin');
    return next();
  };
}
