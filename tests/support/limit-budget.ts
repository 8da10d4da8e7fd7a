import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { Redis } from 'ioredis';
import { buildUserInput } from './builders.js';
import { TEST_CREDENTIALS } from './test-server.js';

// Spending the per-client budgets (failed credentials, writes) of a deployment from outside, over real HTTP.

/** The Redis the suites share (CI and this machine run one on the default port; see global-setup.js). */
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Whether that Redis answered when the run began: where it did not, the tests that need it are skipped. */
export const redisAvailable = process.env.TEST_REDIS === 'available';

/** `test`, or `test.skip` (reported as skipped) when Redis is not reachable. */
export const testWithRedis = redisAvailable ? test : test.skip;

/** The budget the suites configure for both limits. */
export const LIMIT = 10;

/** Server environment with both budgets at LIMIT, and a short bound on the shared store. */
export const LIMIT_ENV = { AUTH_MAX_FAILURES: String(LIMIT), RATE_LIMIT_WRITES_PER_MINUTE: String(LIMIT), RATE_LIMIT_STORE_TIMEOUT_MS: '300' };

const basic = (username: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` });

/**
 * One request on a connection of its own, so that a cluster's workers take turns (keep-alive would pin one);
 * `from` is the loopback address it comes from (127.x.y.z are all this machine), a client of its own.
 */
export function send(url: string, method: string, headers: Record<string, string>, body?: string, from?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent: false, localAddress: from, headers: { connection: 'close', ...headers } }, (res) => {
      res.resume().on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A well-formed Basic credential with the wrong password (for the test user, or the one given), from the address given. */
export const failedLogin = (base: string, username: string = TEST_CREDENTIALS.username, from?: string) =>
  send(`${base}/protected-resource`, 'GET', basic(username, 'wrong'), undefined, from);

/** The test server's credentials. */
export const login = (base: string) => send(`${base}/protected-resource`, 'GET', basic(TEST_CREDENTIALS.username, TEST_CREDENTIALS.password));

let spellings = 0;
/**
 * The test server's credentials in a spelling no request sent before (`Basic` and the token, ever more spaces
 * apart), from the address given: a header that passed a check is not checked again (verified-credentials.ts),
 * and this one must be.
 */
export const firstLogin = (base: string, from?: string) => {
  const { authorization } = basic(TEST_CREDENTIALS.username, TEST_CREDENTIALS.password);
  return send(`${base}/protected-resource`, 'GET', { authorization: authorization.replace(' ', ' '.repeat(++spellings)) }, undefined, from);
};

/** A create of a new user. */
export const create = (base: string) => send(`${base}/users`, 'POST', { 'content-type': 'application/json' }, JSON.stringify(buildUserInput()));

/** How many requests, sent to the bases in turn, are answered `allowed` before the first 429 (at most 4 × LIMIT). */
export async function allowedBefore429(bases: readonly string[], attempt: (base: string) => Promise<number>, allowed: number): Promise<number> {
  for (let sent = 0; sent < 4 * LIMIT; sent++) {
    const status = await attempt(bases[sent % bases.length]!);
    if (status === 429) return sent;
    if (status !== allowed) throw new Error(`request ${sent + 1} was answered ${status}, not ${allowed} or 429`);
  }
  return Infinity;
}

/** Both budgets, spent through the bases in turn: how many failed logins, then creates, got through. */
export async function budgets(bases: readonly string[]): Promise<{ failedLogins: number; writes: number }> {
  return { failedLogins: await allowedBefore429(bases, failedLogin, 401), writes: await allowedBefore429(bases, create, 201) };
}

/** A key prefix of the test's own in the shared Redis, and a way to remove its keys. */
export function redisPrefix() {
  const prefix = `test-${randomBytes(6).toString('hex')}`;
  /** Deletes the prefix's keys; resolves with how many there were. */
  async function clean(): Promise<number> {
    if (!redisAvailable) return 0;
    const redis = new Redis(REDIS_URL);
    try {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      return keys.length;
    } finally {
      redis.disconnect();
    }
  }
  return { prefix, clean };
}
