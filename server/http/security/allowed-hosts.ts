import type { Middleware } from 'koa';
import { answersHost, type AllowedHosts } from '../../host-names.js';
import { misdirected } from './misdirected.js';

/**
 * Refuses (421) a request whose Host names a host this server does not answer for (config.allowedHosts): what a
 * page on another site that points its own name at this server by DNS rebinding sends (server/host-names.ts).
 */
export function allowedHosts(allowed: AllowedHosts): Middleware {
  if (allowed.any) return (_ctx, next) => next();
  return (ctx, next) => {
    const host = ctx.req.headers.host;
    if (answersHost(allowed, host)) return next();
    throw misdirected(host!);
  };
}
