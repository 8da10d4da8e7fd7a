import { request } from 'node:http';
import { hashPassword } from '../../server/auth/password-hash.js';
import { TEST_CREDENTIALS, withTestServer } from '../support/test-server.js';

// Repeated failed Basic attempts are refused with 429 for the address that makes them, not for others.

const basic = (username: string, password: string) => `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;

/** GET from a chosen loopback address, so that tests can be several clients. */
function getFrom(localAddress: string, url: string, authorization?: string) {
  return new Promise<{ status: number; retryAfter?: string; type?: string; ms: number }>((resolve, reject) => {
    const started = performance.now();
    const req = request(url, { localAddress, headers: authorization ? { authorization } : {} }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => {
        const type = res.headers['content-type']?.includes('json') ? (JSON.parse(body) as { type: string }).type : undefined;
        resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'], type, ms: performance.now() - started });
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
    expect((await getFrom('127.0.0.2', url, right)).status).toBe(429);
    expect((await getFrom('127.0.0.2', `${server.url}/api/protected-resource`, right)).status).toBe(429);
    // Another client, with the right password, is not affected.
    expect((await getFrom('127.0.0.3', url, right)).status).toBe(200);
    // Public operations are never throttled.
    expect((await getFrom('127.0.0.2', `${server.url}/users/1`)).status).toBe(200);
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
