import type { Context } from 'koa';
import type { RouteDefinition } from '../../../generated/routes.js';
import type { Principal } from '../../../generated/server/handlers.js';
import type { Config } from '../../config.js';
import type { AuthThrottle } from './auth-throttle.js';
import { createBasicAuthenticator, parseBasicAuthorization } from './basic-auth.js';
import { HttpProblem } from '../errors/problem.js';

const CHALLENGE = 'Basic realm="user-records", charset="UTF-8"';

/** Establishes who calls a secured operation; resolves undefined for public ones. */
export type Authenticate = (ctx: Context) => Promise<Principal | undefined>;

/**
 * The credential check of a secured operation: refused at once (429) while the address, or the user name
 * from that address, has too many recent failures; then the password check, whose failures are counted.
 */
export function authenticate(route: RouteDefinition, config: Config, throttle: AuthThrottle): Authenticate {
  if (route.security.length === 0) return async () => undefined;
  if (route.security.some((scheme) => scheme !== 'basic')) {
    throw new Error(`${route.operationId} uses a security scheme the server does not implement: ${route.security.join(', ')}`);
  }
  const check = createBasicAuthenticator(config.basicAuth);
  return async (ctx) => {
    const header = ctx.get('authorization') || undefined;
    const given = parseBasicAuthorization(header);
    const username = given?.username;
    const keys = [`address ${ctx.ip}`, ...(username === undefined ? [] : [`user ${username} at ${ctx.ip}`])];
    const wait = throttle.retryAfter(keys);
    if (wait !== undefined) {
      throw new HttpProblem('too-many-attempts', `Too many failed attempts; try again in ${wait} seconds.`, { headers: { 'Retry-After': String(wait) } });
    }
    const result = await check(given);
    if ('principal' in result) {
      throttle.succeed(keys[1] ?? keys[0]!);
      return result.principal;
    }
    // A request without credentials is how a client learns it needs them: only attempts count as failures.
    if (header !== undefined) throttle.fail(keys);
    throw new HttpProblem('unauthorized', 'Valid HTTP Basic credentials are required.', { headers: { 'WWW-Authenticate': CHALLENGE } });
  };
}
