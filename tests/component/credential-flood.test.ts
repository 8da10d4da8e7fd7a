import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { destination } from 'pino';
import { hashPassword } from '../../server/password-hash.js';
import { TEST_CREDENTIALS, withTestServer } from '../support/test-server.js';
import { basicHeader, requestFrom } from '../support/request-from.js';
import { startServerProcess } from '../support/server-process.js';
import { createTestStore } from '../support/test-store.js';

// With a hashed password every check costs tens of milliseconds of a libuv thread. Floods of requests
// without credentials must cost none, and floods of guesses must not queue ahead of the real user.

const right = basicHeader(TEST_CREDENTIALS.username, TEST_CREDENTIALS.password);
/**
 * The right credential in a spelling no request sent before (`Basic` and the token, `n` spaces apart): a header
 * that passed a check is not checked again (verified-credentials.ts), and these tests are about the checks.
 */
let spellings = 0;
const rightSpelledAnew = () => ({ authorization: right.authorization.replace(' ', ' '.repeat(++spellings)) });
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

/**
 * One login of the real user, checked as a first login is (a new spelling each try), who honours `Retry-After`
 * on a 503 as a client should, `tries` times at most: the last answer, the time from the first try, and how
 * many tries it took.
 */
async function login(url: string, tries: number) {
  const started = performance.now();
  for (let tried = 1; ; tried++) {
    const answer = await requestFrom(url, { from: '127.0.0.3', headers: rightSpelledAnew() });
    if (answer.status !== 503 || tried === tries) return { ...answer, ms: performance.now() - started, tries: tried };
    await new Promise((resolve) => setTimeout(resolve, Number(answer.headers['retry-after']) * 1000));
  }
}

/**
 * How much slower the real user's logins may be under an attack than the same logins without it, measured in
 * the same test: a busy machine slows both alike. Queued behind the guesses they were 10-30 times slower.
 */
const SLOWER_AT_MOST = 4;

/** The slowest the real user's logins may be under an attack: SLOWER_AT_MOST times the slowest of 8 without one, and never less than 500 ms. */
async function loginBound(url: string): Promise<number> {
  const quiet: number[] = [];
  for (let i = 0; i < 8; i++) quiet.push((await login(url, 1)).ms);
  return Math.max(500, SLOWER_AT_MOST * Math.max(...quiet));
}

/**
 * The real user's logins (`count`, `pauseMs` apart, from its own address) while `attack` runs, once the attack
 * has had `headStartMs` to fill the queue: each one's status, time and tries, and the statuses the attack saw.
 */
async function loginsDuring(
  url: string,
  attack: (stop: Promise<void>) => Promise<Map<number, number>>,
  { count = 8, headStartMs = 300, tries = 1, pauseMs = 0 } = {},
) {
  let finish!: () => void;
  const stop = new Promise<void>((resolve) => (finish = resolve));
  const attacked = attack(stop);
  await new Promise((resolve) => setTimeout(resolve, headStartMs));
  const logins = [];
  for (let i = 0; i < count; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    logins.push(await login(url, tries));
  }
  finish();
  return {
    statuses: logins.map((login) => login.status),
    ms: logins.map((login) => Math.round(login.ms)),
    tries: logins.map((login) => login.tries),
    seen: await attacked,
  };
}

test('requests without credentials never cost a hash: a flood of them does not slow the real login', () =>
  withTestServer({ env: { BASIC_AUTH_PASSWORD_HASH: hash } }, async (server) => {
    const url = `${server.url}/protected-resource`;
    const bound = await loginBound(url);
    const { statuses, ms, seen } = await loginsDuring(url, (stop) => flood(url, '127.0.0.2', 32, () => ({}), stop));
    expect([...seen.keys()]).toEqual([401]);
    expect(statuses.every((status) => status === 200)).toBe(true);
    expect(Math.max(...ms)).toBeLessThan(bound);
  }));

test('one client guessing in parallel has one check at a time: the real user is not queued behind it', () =>
  withTestServer({ env: { BASIC_AUTH_PASSWORD_HASH: hash, AUTH_MAX_FAILURES: '100000' } }, async (server) => {
    const url = `${server.url}/protected-resource`;
    const guesses = (i: number) => basicHeader(TEST_CREDENTIALS.username, `guess-${i}`);
    const bound = await loginBound(url);
    const { statuses, ms, seen } = await loginsDuring(url, (stop) => flood(url, '127.0.0.2', 32, guesses, stop));
    expect(seen.get(401)).toBeGreaterThan(0);
    expect(statuses.every((status) => status === 200)).toBe(true);
    expect(Math.max(...ms)).toBeLessThan(bound);
  }));

test('a logged-in client sends its credential with every request, in parallel: each is answered, none checked again', () =>
  withTestServer({ env: { BASIC_AUTH_PASSWORD_HASH: hash } }, async (server) => {
    const url = `${server.url}/protected-resource`;
    expect((await requestFrom(url, { from: '127.0.0.6', headers: right })).status).toBe(200);
    // A browser loading a page of protected parts: checked again, all but one were refused as parallel guesses.
    const answers = await Promise.all(Array.from({ length: 20 }, () => requestFrom(url, { from: '127.0.0.6', headers: right })));
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    // From another address too: the header proved itself, wherever it comes from.
    expect((await requestFrom(url, { from: '127.0.0.7', headers: right })).status).toBe(200);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).not.toMatch(/^rate_limited_total\{limit="hash_per_client"\} [1-9]/m);
  }));

/** Keeps one guess in flight from each of `addresses` until `stop` resolves, as many attacking clients do; the statuses seen. */
async function floodFrom(url: string, addresses: readonly string[], stop: Promise<void>) {
  const guesses = (i: number) => basicHeader(TEST_CREDENTIALS.username, `guess-${i}`);
  const seen = await Promise.all(addresses.map((from) => flood(url, from, 1, guesses, stop)));
  const all = new Map<number, number>();
  for (const statuses of seen) for (const [status, count] of statuses) all.set(status, (all.get(status) ?? 0) + count);
  return all;
}

// Issue 24, item 5: 200 addresses guessing kept the one queue of 32 full, and the real user's login got
// 503 five times out of five. The real user, refused, waits Retry-After and tries again. Against many addresses
// of one block it must be let in at once, every time; against 200 blocks that each wait their turn (200 clients,
// as far as anyone can tell) it has its fair share of the turns: one login within a round of all of them.
test.each([
  ['200 addresses of one /24 block', Array.from({ length: 200 }, (_, i) => `127.0.9.${i + 1}`), { count: 5, tries: 5, pauseMs: 1000 }],
  ['200 addresses, each in a /24 block of its own', Array.from({ length: 200 }, (_, i) => `127.${10 + i}.0.1`), { count: 1, tries: 20 }],
])(
  'a guessing flood from %s does not lock out the real user',
  async (_, attackers, logins) => {
    // The server runs as a process of its own, so that the attackers' loops here do not share its event loop.
    const store = await createTestStore('sqlite');
    const server = await startServerProcess(store, { BASIC_AUTH_PASSWORD_HASH: hash, AUTH_MAX_FAILURES: '100000', LOG_LEVEL: 'info' });
    try {
      const url = `${server.url}/protected-resource`;
      // A second's head start: every attacker is refused or queued at once, so the queue is full by then.
      const { statuses, ms, tries, seen } = await loginsDuring(url, (stop) => floodFrom(url, attackers, stop), { headStartMs: 1000, ...logins });
      expect(seen.get(503)).toBeGreaterThan(0); // the queue was full: the flood did what it did before
      // The tries and times show in a failure's diff: how far from its fair share the real user was.
      expect({ statuses, tries, ms }).toEqual({ statuses: statuses.map(() => 200), tries, ms });
    } finally {
      await server.stop();
      await store.drop();
    }
  },
  120_000,
);

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
  const errors = readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line.includes('"level":50'));
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
