import cors from '@koa/cors';
import type { Middleware } from 'koa';
import helmet from 'koa-helmet';

/** Headers a browser may read from a cross-origin response, beyond the CORS-safelisted ones. */
const EXPOSED = ['ETag', 'Link', 'Location', 'Retry-After', 'RateLimit', 'RateLimit-Policy', 'WWW-Authenticate', 'X-Request-Id', 'Idempotent-Replayed', 'X-Total-Count', 'X-Total-Count-Relation', 'Preference-Applied', 'traceparent'];
/** Request headers a cross-origin caller may send. */
// The request headers the contract names, and W3C trace context, which browser tracing (OpenTelemetry's web
// instrumentation) sends and the service continues (tracing.ts).
const ALLOWED = ['Authorization', 'Content-Type', 'If-Match', 'If-None-Match', 'Idempotency-Key', 'X-Request-Id', 'x-custom-header', 'Custom-Header', 'Prefer', 'traceparent', 'tracestate'];

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

/** A page served from this machine during development: http(s) on localhost, 127.0.0.1 or [::1], any port. */
const LOCAL_ORIGIN = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/;

/**
 * CORS for the listed browser origins only (and, in sandbox mode, any local development origin), with
 * preflight; other origins get no CORS headers at all. Every response varies by Origin. Requests without an
 * Origin (not from a browser's cross-origin fetch) skip the CORS machinery: an await and a header parse that
 * were a measurable share of a GET.
 */
export function corsFor(origins: readonly string[], { localDevelopment = false } = {}): Middleware {
  const allowed = new Set(origins);
  const admits = (origin: string) => allowed.has(origin) || (localDevelopment && LOCAL_ORIGIN.test(origin));
  const handle = cors({
    origin: (ctx) => (admits(ctx.get('Origin')) ? ctx.get('Origin') : ''),
    allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    allowHeaders: ALLOWED,
    exposeHeaders: EXPOSED,
    maxAge: 600,
  });
  return (ctx, next) => {
    if (ctx.req.headers.origin !== undefined) return handle(ctx, next);
    ctx.vary('Origin');
    return next();
  };
}
