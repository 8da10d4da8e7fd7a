import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { destination } from 'pino';
import { hashPassword } from '../../server/auth/password-hash.js';
import { TEST_CREDENTIALS, withTestServer } from '../support/test-server.js';
import { basicHeader, requestFrom } from '../support/request-from.js';

// With a hashed password every check costs tens of milliseconds of a libuv thread. Floods of requests
// without credentials must cost none, and floods of guesses must not queue ahead of the real user.

const right = basicHeader(TEST_CREDENTIALS.username, TEST_CREDENTIALS.password);
let hash: string;
beforeAll(async () => {
  hash = await hashPassword(TEST_CREDENTIALS.password);
});

/** Keeps `connections` requests in flight from `from` until `stop` resolves; resolves the statuses seen. */
async function flood(url: string, from: string, connections: number, headers: (i: number) => Record<string, string>, stop: Promise<void>) {
  let running = true;
  void stop.then(() => (running = false));
  const seen = new Map<number, number>();
  let sent = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (running) {
        const { status } = await requestFrom(url, { from, headers: headers(sent++) });
        seen.set(status, (seen.get(status) ?? 0) + 1);
      }
    }),
  );
  return seen;
}

/** The slowest of the real user's logins, one after another. */
async function slowestLogin(url: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 8; i++) {
    const login = await requestFrom(url, { from: '127.0.0.3', headers: right });
    expect(login.status).toBe(200);
    times.push(login.ms);
  }
  return Math.max(...times);
}

/**
 * How much slower the real user's logins may be under the attack than without it, measured in the same test:
 * a busy machine slows both alike. Queued behind the guesses they were 10-30 times slower.
 */
const SLOWER_AT_MOST = 4;

/**
 * The real user's logins while `attack` runs; `bound` is the slowest they may take: SLOWER_AT_MOST times the
 * slowest without the attack, and never less than 500 ms (what a check costs on a quiet machine is noise).
 */
async function loginsDuring(url: string, attack: (stop: Promise<void>) => Promise<Map<number, number>>) {
  const bound = Math.max(500, SLOWER_AT_MOST * (await slowestLogin(url)));
  let finish!: () => void;
  const stop = new Promise<void>((resolve) => (finish = resolve));
  const attacked = attack(stop);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const slowest = await slowestLogin(url);
  finish();
  return { slowest, bound, seen: await attacked };
}

test('requests without credentials never cost a hash: a flood of them does not slow the real login', () =>
  withTestServer({ env: { BASIC_AUTH_PASSWORD_HASH: hash } }, async (server) => {
    const url = `${server.url}/protected-resource`;
    const { slowest, bound, seen } = await loginsDuring(url, (stop) => flood(url, '127.0.0.2', 32, () => ({}), stop));
    expect([...seen.keys()]).toEqual([401]);
    expect(slowest).toBeLessThan(bound);
  }));

test('one client guessing in parallel has one check at a time: the real user is not queued behind it', () =>
  withTestServer({ env: { BASIC_AUTH_PASSWORD_HASH: hash, AUTH_MAX_FAILURES: '100000' } }, async (server) => {
    const url = `${server.url}/protected-resource`;
    const guesses = (i: number) => basicHeader(TEST_CREDENTIALS.username, `guess-${i}`);
    const { slowest, bound, seen } = await loginsDuring(url, (stop) => flood(url, '127.0.0.2', 32, guesses, stop));
    expect(seen.get(401)).toBeGreaterThan(0);
    expect(slowest).toBeLessThan(bound);
  }));

test('beyond the queue of hash checks, a clear 503 with Retry-After at once, not a growing wait; counted, not logged as a failure', async () => {
  const logFile = join(mkdtempSync(join(tmpdir(), 'credential-flood-')), 'server.log');
  const env = { BASIC_AUTH_PASSWORD_HASH: hash, AUTH_MAX_FAILURES: '100000', AUTH_HASH_CONCURRENCY: '1', AUTH_HASH_QUEUE: '1', LOG_LEVEL: 'info' };
  await withTestServer({ env, logTo: destination({ dest: logFile, sync: true }) }, async (server) => {
    const url = `${server.url}/protected-resource`;
    const clients = Array.from({ length: 8 }, (_, i) => `127.0.0.${20 + i}`);
    const answers = await Promise.all(clients.map((from, i) => requestFrom(url, { from, headers: basicHeader('someone', `guess-${i}`) })));
    const busy = answers.filter((answer) => answer.status === 503);
    expect(answers.filter((answer) => answer.status === 401).length).toBeGreaterThanOrEqual(2);
    expect(busy.length).toBeGreaterThan(0);
    expect(busy[0]!.body.type).toBe('urn:user-records:problem:credential-checks-busy');
    expect(busy[0]!.headers['retry-after']).toBe('1');
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^rate_limited_total\{limit="hash_queue_full"\} [1-9]/m);
  });
  // A refusal made on purpose is no server failure: no error line, no stack (the metric above counts it).
  const errors = readFileSync(logFile, 'utf8').split('\n').filter((line) => line.includes('"level":50'));
  expect(errors).toEqual([]);
});

test('a client refused for its guesses still gets the 401 challenge when it asks without credentials', () =>
  withTestServer({ env: { AUTH_MAX_FAILURES: '2' } }, async (server) => {
    const url = `${server.url}/protected-resource`;
    for (const i of [1, 2]) await requestFrom(url, { from: '127.0.0.4', headers: basicHeader('x', `${i}`) });
    expect((await requestFrom(url, { from: '127.0.0.4', headers: basicHeader('x', '3') })).status).toBe(429);
    for (const headers of [{}, { authorization: 'Bearer abc' }, { authorization: 'Basic ***' }] as Record<string, string>[]) {
      const asked = await requestFrom(url, { from: '127.0.0.4', headers });
      expect(asked.status).toBe(401);
      expect(asked.headers['www-authenticate']).toBe('Basic realm="user-records", charset="UTF-8"');
    }
  }));
