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

test('a success forgives that client its failures, whatever user names they were made with, and no other client its own', () =>
  withTestServer({ env }, async (server) => {
    const url = `${server.url}/protected-resource`;
    const from = (address: string, headers: Record<string, string>) => requestFrom(url, { from: address, headers }).then((res) => res.status);
    expect([await from('127.0.0.9', guess(1)), await from('127.0.0.9', guess(2)), await from('127.0.0.9', right)]).toEqual([401, 401, 200]);
    // The user's typos are forgiven: two more, and the right password still gets in.
    expect([await from('127.0.0.9', guess(3)), await from('127.0.0.9', guess(4)), await from('127.0.0.9', right)]).toEqual([401, 401, 200]);
    // Failures with another user name are forgiven too: the service has one credential, and a client that
    // holds it gains nothing by guessing. A budget of 3 is whole again after the success.
    expect([
      await from('127.0.0.9', basicHeader('mallory', 'a')),
      await from('127.0.0.9', basicHeader('mallory', 'b')),
      await from('127.0.0.9', right),
    ]).toEqual([401, 401, 200]);
    expect([
      await from('127.0.0.9', guess(5)),
      await from('127.0.0.9', guess(6)),
      await from('127.0.0.9', guess(7)),
      await from('127.0.0.9', guess(8)),
    ]).toEqual([401, 401, 401, 429]);
    // Another client's failures are its own: a success from 127.0.0.9 forgave none of them.
    expect([await from('127.0.0.10', guess(9)), await from('127.0.0.10', guess(10))]).toEqual([401, 401]);
    expect(await from('127.0.0.11', right)).toBe(200);
    expect([await from('127.0.0.10', guess(11)), await from('127.0.0.10', guess(12))]).toEqual([401, 429]);
  }));
