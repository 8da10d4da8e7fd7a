import { TEST_CREDENTIALS, withTestServer } from '../support/test-server.js';
import { basicHeader, requestFrom } from '../support/request-from.js';

// The failed-credential throttle counts per client, and the client is who the trusted proxy says it is:
// neither what the client wrote into X-Forwarded-For, nor a differently spelled copy of its address.
// Here the test plays both the client and a proxy (TRUST_PROXY=true: one hop) that appends its address.

const env = { AUTH_MAX_FAILURES: '3', AUTH_FAILURE_WINDOW_SECONDS: '60', TRUST_PROXY: 'true' };
const guess = (i: number) => basicHeader(TEST_CREDENTIALS.username, `guess-${i}`);
const right = basicHeader(TEST_CREDENTIALS.username, TEST_CREDENTIALS.password);

test('entries the client wrote into X-Forwarded-For give it no fresh budget', () =>
  withTestServer({ env }, async (server) => {
    const url = `${server.url}/protected-resource`;
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const forwarded = `198.51.100.${i}, 203.0.113.7`; // the client wrote the first, the proxy appended the second
      statuses.push((await requestFrom(url, { from: '127.0.0.1', headers: { 'x-forwarded-for': forwarded, ...guess(i) } })).status);
    }
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429, 429, 429, 429, 429]);
  }));

test('a client cannot lock out an address it names', () =>
  withTestServer({ env }, async (server) => {
    const url = `${server.url}/protected-resource`;
    for (let i = 0; i < 6; i++) {
      await requestFrom(url, { from: '127.0.0.1', headers: { 'x-forwarded-for': `203.0.113.50, 203.0.113.66`, ...guess(i) } });
    }
    const victim = await requestFrom(url, { from: '127.0.0.1', headers: { 'x-forwarded-for': '203.0.113.50', ...right } });
    expect(victim.status).toBe(200);
  }));

test('spellings of one address, and addresses of one IPv6 /64, share one budget', () =>
  withTestServer({ env }, async (server) => {
    const url = `${server.url}/protected-resource`;
    const spellings = ['2001:db8::1', '2001:DB8::1', '2001:0db8:0:0:0:0:0:1', '2001:db8::2', '2001:db8::ffff:1'];
    const v6 = [];
    for (const [i, address] of spellings.entries()) {
      v6.push((await requestFrom(url, { from: '127.0.0.1', headers: { 'x-forwarded-for': address, ...guess(i) } })).status);
    }
    expect(v6).toEqual([401, 401, 401, 429, 429]);
    const v4 = [];
    for (const [i, address] of ['198.51.100.9', '::ffff:198.51.100.9', '::FFFF:c633:6409', '198.51.100.9'].entries()) {
      v4.push((await requestFrom(url, { from: '127.0.0.1', headers: { 'x-forwarded-for': address, ...guess(i) } })).status);
    }
    expect(v4).toEqual([401, 401, 401, 429]);
  }));

test('a success forgives what that client did wrong with that user name, in both counts, and nothing else', () =>
  withTestServer({ env }, async (server) => {
    const url = `${server.url}/protected-resource`;
    const from = (headers: Record<string, string>) => requestFrom(url, { from: '127.0.0.9', headers }).then((res) => res.status);
    expect([await from(guess(1)), await from(guess(2)), await from(right)]).toEqual([401, 401, 200]);
    // The user's typos are forgiven: two more, and the right password still gets in.
    expect([await from(guess(3)), await from(guess(4)), await from(right)]).toEqual([401, 401, 200]);
    // Failures with another user name from the same client are not: 2 for "mallory", forgiven 2 for the
    // user, so the client count is 2 and the next failure reaches the limit.
    expect([await from(basicHeader('mallory', 'a')), await from(basicHeader('mallory', 'b'))]).toEqual([401, 401]);
    expect([await from(right), await from(guess(5)), await from(right)]).toEqual([200, 401, 429]);
  }));
