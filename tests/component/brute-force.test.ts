import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { destination } from 'pino';
import { hashPassword } from '../../server/password-hash.js';
import { TEST_CREDENTIALS, withTestServer } from '../support/test-server.js';

// Repeated failed Basic attempts are refused with 429 for the address that makes them, not for others.

const basic = (username: string, password: string) => `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;

/** GET from a chosen loopback address, so that tests can be several clients. */
function getFrom(localAddress: string, url: string, authorization?: string) {
  return new Promise<{ status: number; retryAfter?: string; rateLimitPolicy?: string; rateLimit?: string; type?: string; ms: number }>((resolve, reject) => {
    const started = performance.now();
    const req = request(url, { localAddress, headers: authorization ? { authorization } : {} }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => {
        const type = res.headers['content-type']?.includes('json') ? (JSON.parse(body) as { type: string }).type : undefined;
        const [rateLimitPolicy, rateLimit] = [res.headers['ratelimit-policy'], res.headers.ratelimit].map((value) => value?.toString());
        resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'], rateLimitPolicy, rateLimit, type, ms: performance.now() - started });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const env = { AUTH_MAX_FAILURES: '3', AUTH_FAILURE_WINDOW_SECONDS: '60' };

test('after the threshold an address gets 429 with Retry-After, even with the right password; others still get in', () =>
  withTestServer({ env }, async (server) => {
    const url = `${server.url}/protected-resource`;
    const right = basic(TEST_CREDENTIALS.username, TEST_CREDENTIALS.password);
    for (let attempt = 1; attempt <= 3; attempt++) {
      expect((await getFrom('127.0.0.2', url, basic(TEST_CREDENTIALS.username, `guess-${attempt}`))).status).toBe(401);
    }
    const refused = await getFrom('127.0.0.2', url, basic(TEST_CREDENTIALS.username, 'guess-4'));
    expect(refused.status).toBe(429);
    expect(refused.type).toBe('urn:user-records:problem:too-many-attempts');
    expect(Number(refused.retryAfter)).toBeGreaterThan(50);
    expect(Number(refused.retryAfter)).toBeLessThanOrEqual(60);
    expect(refused.rateLimitPolicy).toBe('"credentials";q=3;w=60');
    expect(refused.rateLimit).toBe(`"credentials";r=0;t=${refused.retryAfter}`);
    expect((await getFrom('127.0.0.2', url, right)).status).toBe(429);
    expect((await getFrom('127.0.0.2', `${server.url}/api/protected-resource`, right)).status).toBe(429);
    // Another client, with the right password, is not affected.
    expect((await getFrom('127.0.0.3', url, right)).status).toBe(200);
    // Public operations are never throttled.
    expect((await getFrom('127.0.0.2', `${server.url}/users/1`)).status).toBe(200);
  }));

test('a client whose credential passed before is refused like any other once its guesses reach the threshold; a success forgives', () =>
  withTestServer({ env }, async (server) => {
    const url = `${server.url}/protected-resource`;
    const right = basic(TEST_CREDENTIALS.username, TEST_CREDENTIALS.password);
    expect((await getFrom('127.0.0.6', url, right)).status).toBe(200);
    // Failures not yet at the threshold: the right credential, checked again, forgives them.
    for (const guess of ['a', 'b']) expect((await getFrom('127.0.0.6', url, basic(TEST_CREDENTIALS.username, guess))).status).toBe(401);
    expect((await getFrom('127.0.0.6', url, right)).status).toBe(200);
    for (const guess of ['c', 'd', 'e']) expect((await getFrom('127.0.0.6', url, basic(TEST_CREDENTIALS.username, guess))).status).toBe(401);
    // At the threshold: the credential it was let in with is refused too, however often it passed.
    expect((await getFrom('127.0.0.6', url, right)).status).toBe(429);
    expect((await getFrom('127.0.0.6', url, basic(TEST_CREDENTIALS.username, 'f'))).status).toBe(429);
    expect((await getFrom('127.0.0.7', url, right)).status).toBe(200);
  }));

test('failures with many user names from one address count for the address', () =>
  withTestServer({ env }, async (server) => {
    const url = `${server.url}/protected-resource`;
    for (const user of ['alice', 'bob', 'carol']) expect((await getFrom('127.0.0.4', url, basic(user, 'x'))).status).toBe(401);
    expect((await getFrom('127.0.0.4', url, basic('dave', 'x'))).status).toBe(429);
  }));

test('asking without credentials is not an attempt', () =>
  withTestServer({ env }, async (server) => {
    const url = `${server.url}/protected-resource`;
    for (let i = 0; i < 5; i++) expect((await getFrom('127.0.0.5', url)).status).toBe(401);
    expect((await getFrom('127.0.0.5', url, basic(TEST_CREDENTIALS.username, TEST_CREDENTIALS.password))).status).toBe(200);
  }));

test('with a hashed password, an unknown user and a wrong password take the same time', async () => {
  const hash = await hashPassword(TEST_CREDENTIALS.password);
  await withTestServer({ env: { BASIC_AUTH_PASSWORD_HASH: hash, AUTH_MAX_FAILURES: '1000' } }, async (server) => {
    const url = `${server.url}/protected-resource`;
    expect((await getFrom('127.0.0.6', url, basic(TEST_CREDENTIALS.username, TEST_CREDENTIALS.password))).status).toBe(200);
    const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const unknownUser: number[] = [];
    const wrongPassword: number[] = [];
    for (let i = 0; i < 15; i++) {
      unknownUser.push((await getFrom('127.0.0.6', url, basic(`nobody-${i}`, 'guess'))).ms);
      wrongPassword.push((await getFrom('127.0.0.6', url, basic(TEST_CREDENTIALS.username, `guess-${i}`))).ms);
    }
    const ratio = median(unknownUser) / median(wrongPassword);
    expect(ratio).toBeGreaterThan(0.7);
    expect(ratio).toBeLessThan(1.4);
    // Both really pay for the hash, rather than the unknown user returning early.
    expect(median(unknownUser)).toBeGreaterThan(5);
  });
});

test('a lockout is logged once (without the user name) and counted; refusals and failures show in /metrics', async () => {
  const scratch = mkdtempSync(join(tmpdir(), 'brute-force-'));
  const file = join(scratch, 'server.log');
  try {
    await withTestServer({ env: { ...env, LOG_LEVEL: 'info' }, logTo: destination({ dest: file, sync: true }) }, async (server) => {
      const url = `${server.url}/protected-resource`;
      for (let attempt = 1; attempt <= 6; attempt++) await getFrom('127.0.0.7', url, basic('someone-secret', `guess-${attempt}`));
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      expect(metrics).toMatch(/^auth_failures_total 3$/m);
      expect(metrics).toMatch(/^rate_limited_total\{limit="credentials"\} 3$/m);
    });
    const warnings = readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line.includes('reached the limit'));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40, client: '127.0.0.7' });
    expect(warnings[0]).not.toContain('someone-secret');
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});

test('IPv6 clients are throttled too (a server listening on ::1)', () =>
  withTestServer({ env: { ...env, HOST: '::1' } }, async (server) => {
    const url = `${server.url}/protected-resource`;
    const statuses = [];
    for (let attempt = 1; attempt <= 4; attempt++) statuses.push((await getFrom('::1', url, basic(TEST_CREDENTIALS.username, `guess-${attempt}`))).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
  }));
