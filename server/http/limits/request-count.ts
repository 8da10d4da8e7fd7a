import type { Middleware } from 'koa';

/**
 * Asks the client to close its connection (`Connection: close`, after which Node closes it) once the
 * connection has carried its share of requests, or when the server is shutting down. Node's own
 * maxRequestsPerSocket would answer pipelined requests past the limit with a bare 503 instead.
 */
export function requestsPerConnection(maxRequests: number, lifecycle: { readonly closing: boolean }): Middleware {
  const served = new WeakMap<object, number>();
  return async (ctx, next) => {
    const count = (served.get(ctx.req.socket) ?? 0) + 1;
    served.set(ctx.req.socket, count);
    if (count >= maxRequests || lifecycle.closing) ctx.set('Connection', 'close');
    try {
      await next();
    } finally {
      // A request that arrived before shutdown began is answered during it: its connection must close too,
      // or it stays open, idle, until SHUTDOWN_TIMEOUT_MS cuts it.
      if (lifecycle.closing && !ctx.headerSent) ctx.set('Connection', 'close');
    }
  };
}
