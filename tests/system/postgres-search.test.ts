import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expectBulkSearchesFound } from '../support/bulk-searches.js';
import { seedPostgresUsers } from '../support/bulk-seed.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { createTestStore, postgresAvailable, postgresQuery, postgresSuperuserAvailable, type TestStore } from '../support/test-store.js';

// Searches on PostgreSQL: the pg_trgm index answers those it can narrow, searches never hold more than half
// the pool's connections, and a database that cannot have pg_trgm still runs the service.

const USERS = 250_000;
const NO_INDEX = 'the database has no substring index (PostgreSQL without pg_trgm)';

/** The CREATE INDEX statement the deployment guide gives administrators who add pg_trgm later. */
function readmeIndexStatement(): string {
  const guide = readFileSync(fileURLToPath(new URL('../../docs/deployment.md', import.meta.url)), 'utf8');
  const statement = /^\s*(CREATE INDEX users_search .*;)$/m.exec(guide);
  if (!statement) throw new Error('docs/deployment.md no longer gives the CREATE INDEX statement for the substring index');
  return statement[1]!;
}
const describePostgres = postgresAvailable ? describe : describe.skip;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describePostgres('searches on PostgreSQL', () => {
  let store: TestStore;
  let schema: string;
  const applicationName = `search_${randomBytes(4).toString('hex')}`;
  beforeAll(async () => {
    store = await createTestStore('postgres');
    schema = /search_path=(\w+)/.exec(decodeURIComponent(store.url))![1]!;
    // A first start migrates the store; the users are then written straight into it.
    await (await startServerProcess(store, { LOG_LEVEL: 'info', SEED_DEMO_DATA: 'false' })).stop();
    await seedPostgresUsers(store, USERS);
  }, 60_000);
  afterAll(async () => {
    await store.drop();
  });

  const start = (env: Record<string, string> = {}) => {
    const url = new URL(store.url);
    url.searchParams.set('application_name', applicationName);
    return startServerProcess(store, { LOG_LEVEL: 'info', DATABASE_URL: url.toString(), ...env });
  };

  /** How many times the database has read the substring index (its statistics reach the view within seconds). */
  const indexScans = async () =>
    Number(
      (
        await postgresQuery<{ n: string }>(
          `select coalesce(sum(idx_scan), 0) as n from pg_stat_user_indexes where schemaname = $1 and indexrelname = 'users_search'`,
          [schema],
        )
      )[0]!.n,
    );

  test('searches the pg_trgm index narrows find their users among 250,000 through it, and it follows writes', async () => {
    const server = await start();
    try {
      const before = await indexScans();
      await expectBulkSearchesFound(server.url);
      const page = await fetch(`${server.url}/api/users?q=bulk12345&per_page=4&page=3`);
      expect(((await page.json()) as { total: number; data: Array<{ email: string }> }).data.map((user) => user.email)).toEqual([
        'bulk123457@example.com',
        'bulk123458@example.com',
        'bulk123459@example.com',
      ]);
      // The database reports reading the index (a backend hands its statistics on within about 10 s).
      const deadline = Date.now() + 20_000;
      while ((await indexScans()) === before && Date.now() < deadline) await sleep(250);
      expect(await indexScans()).toBeGreaterThan(before);
    } finally {
      await server.stop();
    }
  }, 60_000);

  test('a search read by id gives each of its users once, in order, along next and prev links both ways', async () => {
    // `bulk1234` matches Bulk1234, Bulk12340-12349 and Bulk123400-123499: 111 users, whose ids are one past
    // their numbers (the first start seeded no demo users). Each page reads its slice of the kept ids.
    const numbers = [1234, ...Array.from({ length: 10 }, (_, i) => 12340 + i), ...Array.from({ length: 100 }, (_, i) => 123400 + i)];
    const expected = numbers.map((n) => n + 1).sort((a, b) => a - b);
    const server = await start();
    const links = (header: string | null) =>
      Object.fromEntries([...(header ?? '').matchAll(/<([^>]*)>; rel="(\w+)"/g)].map(([, target, rel]) => [rel!, target!]));
    /** Every page from `path` along the `rel` links (shape A's or B's), and the link that goes back from the last. */
    const follow = async (path: string, rel: 'next' | 'prev') => {
      const pages: number[][] = [];
      let back: string | undefined;
      for (let at: string | undefined = path; at !== undefined; ) {
        const response = await fetch(new URL(at, server.url));
        expect(response.status).toBe(200);
        const body = (await response.json()) as Array<{ id: number }> | { data: Array<{ id: number }> };
        pages.push((Array.isArray(body) ? body : body.data).map((user) => user.id));
        const found = links(response.headers.get('link'));
        back = found[rel === 'next' ? 'prev' : 'next'];
        at = found[rel];
        if (pages.length > 100) throw new Error('the links never end');
      }
      return { pages, back };
    };
    try {
      const complete = (await (await fetch(`${server.url}/users?q=bulk1234`)).json()) as Array<{ id: number }>;
      expect(complete.map((user) => user.id)).toEqual(expected);
      const up = await follow('/users?q=bulk1234&limit=7', 'next');
      expect(up.pages.flat()).toEqual(expected);
      expect(up.pages.at(-1)).toHaveLength(expected.length % 7);
      const descending = await follow('/users?q=bulk1234&limit=7&sort=-id', 'next');
      expect(descending.pages.flat()).toEqual([...expected].reverse());
      // Shape A's pages: forwards, then back from the last along its `prev` links (read backwards).
      const forwards = await follow('/api/users?q=bulk1234&per_page=7', 'next');
      expect(forwards.pages.flat()).toEqual(expected);
      const backwards = await follow(forwards.back!, 'prev');
      expect([...backwards.pages].reverse().flat()).toEqual(expected.slice(0, -(expected.length % 7)));
      const numbered = await fetch(`${server.url}/api/users?q=bulk1234&per_page=5&page=20&sort=-id`);
      expect(((await numbered.json()) as { data: Array<{ id: number }> }).data.map((user) => user.id)).toEqual([...expected].reverse().slice(95, 100));
    } finally {
      await server.stop();
    }
  }, 60_000);

  test("searches hold at most half the pool's connections, however many run, and other requests are answered", async () => {
    // Store time enough for every page and count to examine all 250,000 users: the searches run for seconds, and
    // the samples below see them running. With the default budget (50 ms a page) they could all end before the
    // first sample on a busy machine (it once sampled none).
    const server = await start({ DATABASE_POOL_SIZE: '4', SEARCH_BUDGET_MS: '10000' });
    try {
      // Two letters: the index cannot narrow them, and each search examines all 250,000 users, a thousand per statement.
      const searches = Promise.all(
        Array.from({ length: 16 }, (_, i) => fetch(`${server.url}${i % 2 ? '/users?q=zq&limit=5' : '/api/users?q=zq'}`).then((res) => res.status)),
      );
      let done = false;
      void searches.finally(() => (done = true));
      let most = 0;
      const others: number[] = [];
      while (!done) {
        const [row] = await postgresQuery<{ n: string }>(
          `select count(*) as n from pg_stat_activity where application_name = $1 and state = 'active' and query like '%escape%'`,
          [applicationName],
        );
        most = Math.max(most, Number(row!.n));
        others.push((await fetch(`${server.url}/users/1`)).status);
      }
      expect(await searches).toEqual(Array(16).fill(200));
      expect(most).toBeGreaterThan(0);
      expect(most).toBeLessThanOrEqual(2);
      expect(others.every((status) => status === 200)).toBe(true);
    } finally {
      await server.stop();
    }
  }, 120_000);
});

// Makes a database and a role of its own, which needs a superuser.
(postgresSuperuserAvailable ? describe : describe.skip)('a database that cannot have pg_trgm', () => {
  const suffix = randomBytes(4).toString('hex');
  const database = `urs_plain_${suffix}`;
  const role = `urs_plain_${suffix}`;
  const adminOf = (name: string) => {
    const url = new URL(process.env.TEST_POSTGRES_URL!);
    url.pathname = `/${name}`;
    return url.toString();
  };
  beforeAll(async () => {
    await postgresQuery(`create role ${role} login`);
    await postgresQuery(`create database ${database}`);
    // The role owns its schema, and has no CREATE on the database: it may not install an extension.
    await postgresQuery(`create schema service authorization ${role}`, [], adminOf(database));
  });
  afterAll(async () => {
    await postgresQuery(`drop database if exists ${database} with (force)`);
    await postgresQuery(`drop role if exists ${role}`);
  });

  test('still migrates and serves; its searches examine users one by one, the start says so, and the index can be added later', async () => {
    const url = new URL(adminOf(database));
    url.username = role;
    url.searchParams.set('options', '-c search_path=service');
    const store: TestStore = { dialect: 'postgres', url: url.toString(), drop: async () => {} };
    const search = async (server: ServerProcess) => {
      const res = await fetch(`${server.url}/users?q=castel`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as Array<{ email: string }>).map((user) => user.email)).toEqual(['mira.castellan@example.com']);
    };
    const without = await startServerProcess(store, { LOG_LEVEL: 'info' });
    try {
      expect(without.output()).toContain(NO_INDEX);
      await search(without);
      expect(await postgresQuery(`select 1 from pg_extension where extname = 'pg_trgm'`, [], adminOf(database))).toHaveLength(0);
    } finally {
      await without.stop();
    }
    // What README (Running on PostgreSQL) tells an administrator to run; the next start finds the index.
    await postgresQuery('create extension pg_trgm schema service', [], adminOf(database));
    await postgresQuery(`set search_path = service; ${readmeIndexStatement()}`, [], adminOf(database));
    const withIndex = await startServerProcess(store, { LOG_LEVEL: 'info' });
    try {
      expect(withIndex.output()).not.toContain(NO_INDEX);
      await search(withIndex);
    } finally {
      await withIndex.stop();
    }
  }, 60_000);
});
