import type { Context } from 'koa';
import type { RouteDefinition } from '../../../generated/routes.js';
import type { Principal } from '../../../generated/server/handlers.js';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { CountsUnavailableError } from '../limits/bounded-counter.js';
import type { Limiters } from '../limits/limiter-store.js';
import type { Metrics } from '../observability/metrics.js';
import { createAuthThrottle, type AuthThrottle } from './auth-throttle.js';
import { createBasicAuthenticator, type BasicCheck } from './basic-auth.js';
import { challenge, parseBasicAuthorization, type BasicCredentials } from './basic-credentials.js';
import { createHashGate, type HashGate } from './hash-gate.js';
import { createVerifiedCredentials, type VerifiedCredentials } from './verified-credentials.js';
import { HttpProblem } from '../errors/problem.js';

/** Establishes who calls a secured operation; resolves undefined for public ones. */
export type Authenticate = (ctx: Context) => Promise<Principal | undefined>;

/** What every secured operation of one server shares: the failure counts and the password-hash gate. */
export interface AuthGuards {
  readonly throttle: AuthThrottle;
  /** Present when the password is a hash: plain passwords are compared too cheaply to need a gate. */
  readonly gate: HashGate | undefined;
  /** The headers that passed a check: such a header from a client with a clear record needs no other. */
  readonly verified: VerifiedCredentials;
  readonly metrics: Metrics;
  readonly logger: Logger;
}

/** Builds the guards of one server from its configuration. */
export function createAuthGuards(config: Config, limiters: Limiters, metrics: Metrics, logger: Logger): AuthGuards {
  const gate = config.basicAuth.secret.kind === 'hash' ? createHashGate(config.hashChecks, (why) => metrics.limited(why)) : undefined;
  return { throttle: createAuthThrottle(config.authThrottle, limiters.create), gate, verified: createVerifiedCredentials(), metrics, logger };
}

/**
 * What an attempt gets when the store of the failure counts cannot answer in time: a refusal before any check
 * (503, Retry-After), never a check counted elsewhere. Other errors go up as they are.
 */
function refusedUncounted(metrics: Metrics): (error: unknown) => never {
  return (error) => {
    if (!(error instanceof CountsUnavailableError)) throw error;
    metrics.limitStoreUnavailable('credentials');
    throw new HttpProblem('credential-checks-busy', 'The count of failed attempts cannot be read in time; try again in 1 second.');
  };
}

/**
 * The credential check of a secured operation. A request without well-formed Basic credentials is how a
 * client learns it needs them: it gets the 401 challenge at once, costs no password hash and is never
 * throttled. Each attempt takes its point of the client's budget before the password check (see
 * auth-throttle.ts); an attempt beyond the budget is refused (429) without a check. A header that passed a check
 * before, from a client whose counts hold no point (no failure to forgive, no lockout), is answered as that check
 * answered, without either: Basic credentials come with every request of a logged-in client, and each would
 * cost a password hash and four writes of the shared counts. When those counts cannot be had in time, the attempt is
 * refused (503 `credential-checks-busy`) without a check.
 */
export function authenticate(route: RouteDefinition, config: Config, guards: AuthGuards): Authenticate {
  if (route.security.length === 0) return async () => undefined;
  if (route.security.some((scheme) => scheme !== 'basic')) {
    throw new Error(`${route.operationId} uses a security scheme the server does not implement: ${route.security.join(', ')}`);
  }
  const check = createBasicAuthenticator(config.basicAuth);
  const { throttle, gate, verified, metrics, logger } = guards;
  // draft-ietf-httpapi-ratelimit-headers: failed checks are the quota units of the "credentials" policy.
  const { maxFailures, windowMs } = config.authThrottle;
  const policy = `"credentials";q=${maxFailures};w=${Math.ceil(windowMs / 1000)}`;
  const run = (client: string, given: BasicCredentials): Promise<BasicCheck> => (gate ? gate(client, () => check(given)) : check(given));
  const uncounted = refusedUncounted(metrics);
  return async (ctx) => {
    const header = ctx.get('authorization');
    const client: string = ctx.state.client;
    const known = verified.recognise(header);
    if (known !== undefined && (await throttle.clear(client, known.username).catch(uncounted))) return known;
    const given = parseBasicAuthorization(header || undefined);
    if (given === undefined) throw challenge();
    const guarded = await throttle
      .guard(
        client,
        given.username,
        () => run(client, given),
        (result) => 'principal' in result,
      )
      .catch(uncounted);
    if (!guarded.checked) {
      const wait = guarded.retryAfterSeconds;
      metrics.limited('credentials');
      const headers = { 'Retry-After': String(wait), 'RateLimit-Policy': policy, RateLimit: `"credentials";r=0;t=${wait}` };
      throw new HttpProblem('too-many-attempts', `Too many failed attempts; try again in ${wait} seconds.`, { headers });
    }
    const { result } = guarded;
    if ('principal' in result) {
      verified.remember(header, result.principal);
      return result.principal;
    }
    metrics.authFailed();
    // Logged once per lockout, not per refused guess: an attack must not flood the log. No user name either.
    if (guarded.last)
      logger.warn({ client, requestId: ctx.response.get('X-Request-Id') }, 'failed credential checks reached the limit; client refused for a while');
    throw challenge();
  };
}
