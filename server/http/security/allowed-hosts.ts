import { isIP } from 'node:net';
import type { Middleware } from 'koa';
import type { AllowedHosts } from '../../config.js';
import { HttpProblem } from '../errors/problem.js';
import { excerpt } from '../errors/excerpt.js';

// DNS rebinding: a page on another site points its own name at 127.0.0.1, and the browser, taking the page's
// name for the server's, lets it read this server's answers (the protected resource, with a developer's
// credentials). Its requests carry that name in Host. A server that answers only the names a page cannot take
// over (every IP address, localhost and its subdomains) and those the operator lists refuses them: 421.

/** The host part of a Host header (`name`, `1.2.3.4` or `[::1]`), without its port, lower-cased. */
function hostName(host: string): string {
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d*$/, '');
  return name.toLowerCase();
}

/** True for a name no page can point here: an IP address, or localhost and its subdomains (RFC 6761). */
function cannotBeRebound(name: string): boolean {
  if (isIP(name.startsWith('[') ? name.slice(1, -1) : name) !== 0) return true;
  return name === 'localhost' || name.endsWith('.localhost');
}

/** Refuses (421) a request whose Host names a host this server does not answer (config.allowedHosts). */
export function allowedHosts(allowed: AllowedHosts): Middleware {
  if (allowed.any) return (_ctx, next) => next();
  return (ctx, next) => {
    // HTTP/1.0 without Host: no browser sends one, so no page can.
    const host = ctx.req.headers.host;
    if (host === undefined || host === '') return next();
    const name = hostName(host);
    if (cannotBeRebound(name) || allowed.names.has(name)) return next();
    throw new HttpProblem(
      'misdirected-request',
      `This server does not answer for the host ${excerpt(name)}: it answers its IP addresses, localhost, and the names ALLOWED_HOSTS lists.`,
    );
  };
}
