// Who may call the service from a browser page of another origin, and what such a page may send and read:
// one policy, for the server (browser-headers.ts, through @koa/cors) and for the sandbox served over fetch
// Request/Response (`user-records-sandbox`, which has no Koa). No dependencies: the client package ships it.

/** Headers a browser may read from a cross-origin response, beyond the CORS-safelisted ones. */
export const EXPOSED = [
  'ETag',
  'Link',
  'Location',
  'Retry-After',
  'RateLimit',
  'RateLimit-Policy',
  'WWW-Authenticate',
  'X-Request-Id',
  'Idempotent-Replayed',
  'X-Total-Count',
  'X-Total-Count-Relation',
  'Preference-Applied',
  'traceparent',
];
/** Request headers a cross-origin caller may send. */
// The request headers the contract names, and W3C trace context, which browser tracing (OpenTelemetry's web
// instrumentation) sends and the service continues (tracing.ts).
export const ALLOWED = [
  'Authorization',
  'Content-Type',
  'If-Match',
  'If-None-Match',
  'Idempotency-Key',
  'X-Request-Id',
  'x-custom-header',
  'Custom-Header',
  'Prefer',
  'traceparent',
  'tracestate',
];
/** Methods a cross-origin caller may use. */
export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
/** How long a browser may keep a preflight's answer, in seconds. */
export const PREFLIGHT_MAX_AGE = 600;

/** A page served from this machine during development: http(s) on localhost, 127.0.0.1 or [::1], any port. */
export const LOCAL_ORIGIN = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/;

/**
 * The sandbox's CORS over fetch: local development origins only, as the server in sandbox mode admits them.
 * A preflight from such an origin is answered here (undefined otherwise: the request goes on); `headers` are
 * the ones to add to the answer.
 */
export function localOriginCors(request: Request): { readonly preflight?: Response; readonly headers: Record<string, string> } {
  const origin = request.headers.get('origin');
  if (origin === null || !LOCAL_ORIGIN.test(origin)) return { headers: origin === null ? {} : { Vary: 'Origin' } };
  const headers = { 'Access-Control-Allow-Origin': origin, Vary: 'Origin' };
  if (request.method === 'OPTIONS' && request.headers.has('access-control-request-method')) {
    return {
      preflight: new Response(null, {
        status: 204,
        headers: {
          ...headers,
          'Access-Control-Allow-Methods': METHODS.join(','),
          'Access-Control-Allow-Headers': ALLOWED.join(','),
          'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE),
        },
      }),
      headers,
    };
  }
  return { headers: { ...headers, 'Access-Control-Expose-Headers': EXPOSED.join(',') } };
}
