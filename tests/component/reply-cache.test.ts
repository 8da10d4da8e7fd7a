import SqliteDatabase from 'better-sqlite3';
import { buildUserInput } from '../support/builders.js';
import { seedUsers } from '../support/bulk-seed.js';
import type { HttpClient } from '../support/http-client.js';
import { useTestServer, withTestServer } from '../support/test-server.js';
import { MAX_CACHED_BODY_CHARS, MAX_CACHED_CHARS, MAX_CACHED_REPLIES } from '../../server/http/reply-cache/reply-cache.js';

// On SQLite, replies of lists and of single users are cached, serialized, until the store changes
// (server/http/reply-cache/). A cached reply must be the reply, byte for byte; no write, of this process or
// another, may be missing from the next read after it is acknowledged; and every request is still checked in full.

const sut = useTestServer({ dialect: 'sqlite', env: { SEED_DEMO_DATA: 'true' } });

/** How many lookups found a cached reply (hit) and how many read the list (miss), from /metrics. */
async function lookups(api: HttpClient): Promise<{ hit: number; miss: number }> {
  const text = (await api.get('/metrics')).text;
  const count = (result: string) => Number(new RegExp(`^http_kept_reply_lookups_total\\{result="${result}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { hit: count('hit'), miss: count('miss') };
}

/** The headers a reply is made of, without those that differ by request (its id) or by second (Date). */
function lasting(headers: Headers): [string, string][] {
  const all: [string, string][] = [];
  headers.forEach((value, name) => {
    all.push([name, value]);
  });
  return all.filter(([name]) => !['x-request-id', 'date'].includes(name));
}

test.each([
  '/users',
  '/users?limit=5&sort=-lastName',
  '/api/users?page=2&per_page=3',
  `/api/users?email=${encodeURIComponent('mira.castellan@example.com')}`,
  '/users/2',
  '/api/users/3',
])('a cached reply of %s is the reply: the same status, headers and bytes', async (path) => {
  const first = await sut.api.get(path);
  const before = await lookups(sut.api);
  const again = await sut.api.get(path);
  expect(await lookups(sut.api)).toEqual({ hit: before.hit + 1, miss: before.miss });
  expect(again.status).toBe(first.status);
  expect(lasting(again.headers)).toEqual(lasting(first.headers));
  expect(again.text).toBe(first.text);
});

/** How many requests the duration histogram counted under an operation, method and status, from /metrics. */
async function measured(api: HttpClient, operationId: string, method: string, status: number): Promise<number> {
  const text = (await api.get('/metrics')).text;
  const line = text
    .split('\n')
    .find(
      (row) =>
        row.startsWith('http_request_duration_seconds_count{') &&
        [`operation_id="${operationId}"`, `method="${method}"`, `status="${status}"`].every((label) => row.includes(label)),
    );
  return Number(line?.split(' ').at(-1) ?? 0);
}

test('a cached reply sent again is measured and logged under the operation that made it, for GET and HEAD', async () => {
  await sut.api.get('/api/users/4');
  const before = {
    get: await measured(sut.api, 'getDemoUser', 'GET', 200),
    head: await measured(sut.api, 'getDemoUser', 'HEAD', 200),
    hit: (await lookups(sut.api)).hit,
  };
  const again = await sut.api.get('/api/users/4');
  const head = await fetch(`${sut.server.url}/api/users/4`, { method: 'HEAD' });
  expect(again.status).toBe(200);
  expect(head.status).toBe(200);
  expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(again.text)));
  expect(await head.text()).toBe('');
  expect((await lookups(sut.api)).hit).toBe(before.hit + 2);
  expect(await measured(sut.api, 'getDemoUser', 'GET', 200)).toBe(before.get + 1);
  expect(await measured(sut.api, 'getDemoUser', 'HEAD', 200)).toBe(before.head + 1);
});

test('a request for a cached target with another method is answered by its own operation, never by the cached reply', async () => {
  await sut.api.get('/users/6');
  await sut.api.get('/users/6');
  const post = await fetch(`${sut.server.url}/users/6`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(post.status).toBe(405);
  expect(post.headers.get('allow')).toBe('DELETE, GET, HEAD, OPTIONS, PATCH, PUT');
  const options = await fetch(`${sut.server.url}/users/6`, { method: 'OPTIONS' });
  expect(options.status).toBe(204);
  const patch = await sut.api.request('PATCH', '/users/6', { json: { email: 'not an address' }, headers: { 'content-type': 'application/merge-patch+json' } });
  expect(patch.status).toBe(422);
});

test('requests for a cached reply that arrive together are answered together, and none misses a write acknowledged before them', async () => {
  const path = '/users/7';
  await sut.api.get(path);
  await sut.api.get(path);
  const before = await lookups(sut.api);
  const together = await Promise.all(Array.from({ length: 30 }, () => sut.api.get(path)));
  expect(new Set(together.map((res) => res.text)).size).toBe(1);
  expect((await lookups(sut.api)).hit).toBe(before.hit + 30);
  const other = new SqliteDatabase(sut.server.store.sqliteFile!);
  try {
    other.prepare(`update users set first_name = 'Together', first_name_key = 'together', version = version + 1 where id = 7`).run();
  } finally {
    other.close();
  }
  const after = await Promise.all(Array.from({ length: 30 }, () => sut.api.get(path)));
  for (const res of after) expect(res.body.firstName).toBe('Together');
});

test('every acknowledged write is in the next read, in both shapes', async () => {
  const created = (await sut.api.post('/users', buildUserInput({ lastName: 'Zzz-cached' }))).body as { id: number };
  const paths = ['/users', '/api/users?page=1&per_page=50', '/users?sort=-lastName&limit=50', `/users/${created.id}`, `/api/users/${created.id}`];
  const read = async () => Promise.all(paths.map(async (path) => (await sut.api.get(path)).text));
  await read();
  const cached = await read();
  expect((await sut.api.put(`/users/${created.id}`, buildUserInput({ lastName: 'Zzz-cached-2' }))).status).toBe(200);
  const afterWrite = await read();
  for (const [i, text] of afterWrite.entries()) expect(text).not.toBe(cached[i]);
  for (const text of afterWrite) expect(text).toContain('Zzz-cached-2');
  expect((await sut.api.put(`/users/${created.id}`, buildUserInput({ lastName: 'Zzz-replaced' }))).status).toBe(200);
  for (const text of await read()) expect(text).toContain('Zzz-replaced');
  expect((await sut.api.request('PATCH', `/api/users/${created.id}`, { json: { email: 'zzz.patched@example.com' } })).status).toBe(200);
  for (const text of await read()) expect(text).toContain('zzz.patched@example.com');
  const lists = paths.slice(0, 3);
  const listed = await Promise.all(lists.map(async (path) => (await sut.api.get(path)).text));
  expect((await sut.api.delete(`/api/users/${created.id}`)).status).toBe(204);
  for (const [i, path] of lists.entries()) {
    const text = (await sut.api.get(path)).text;
    expect(text).not.toBe(listed[i]);
    expect(text).not.toContain(`"id":${created.id},`);
  }
  for (const path of paths.slice(3)) expect((await sut.api.get(path)).status).toBe(404);
});

test('a write committed by another connection to the file is in the next read', async () => {
  const paths = ['/users?limit=50', '/users/4'];
  for (const path of [...paths, ...paths]) expect((await sut.api.get(path)).text).not.toContain('Elsewhere');
  const other = new SqliteDatabase(sut.server.store.sqliteFile!);
  try {
    other.prepare(`update users set last_name = 'Elsewhere', last_name_key = 'elsewhere', version = version + 1 where id = 4`).run();
  } finally {
    other.close();
  }
  for (const path of paths) expect((await sut.api.get(path)).text).toContain('Elsewhere');
});

test('a request for a cached reply still has its headers checked: a bad one is refused', async () => {
  await sut.api.get('/users');
  await sut.api.get('/users');
  const refused = await sut.api.get('/users', { headers: { 'x-custom-header': 'x'.repeat(4097) } });
  expect(refused.status).toBe(400);
  expect(refused.body.errors[0].path).toBe('/x-custom-header');
});

test('a request with If-None-Match reads the store: a 304 when its version is current, a 200 after a change', async () => {
  const first = await sut.api.get('/users/5');
  await sut.api.get('/users/5');
  const etag = first.headers.get('etag')!;
  const before = await lookups(sut.api);
  expect((await sut.api.get('/users/5', { headers: { 'if-none-match': etag } })).status).toBe(304);
  expect(await lookups(sut.api)).toEqual(before);
  expect((await sut.api.put('/users/5', buildUserInput())).status).toBe(200);
  expect((await sut.api.get('/users/5', { headers: { 'if-none-match': etag } })).status).toBe(200);
});

test('a complete search is cached, in both shapes, until a write changes what it finds', async () => {
  const paths = ['/users?q=mira', '/users?q=ra&limit=2', '/api/users?q=mira&per_page=3'];
  const first = await Promise.all(paths.map((path) => sut.api.get(path)));
  const before = await lookups(sut.api);
  for (const [i, path] of paths.entries()) expect((await sut.api.get(path)).text).toBe(first[i]!.text);
  expect(await lookups(sut.api)).toEqual({ hit: before.hit + paths.length, miss: before.miss });
  const created = await sut.api.post('/users', { firstName: 'Mirabel', lastName: 'Kept', email: 'mirabel.cached@example.com' });
  expect(created.status).toBe(201);
  const found = await sut.api.get(paths[0]!);
  expect(found.body.map((user: { id: number }) => user.id)).toContain(created.body.id);
  expect(found.headers.get('x-total-count')).toBe(String(Number(first[0]!.headers.get('x-total-count')) + 1));
});

test('a search that stopped short when its store time ran out is not cached: the same request may find more', () =>
  withTestServer({ dialect: 'sqlite', env: { SEED_DEMO_DATA: 'false', SEARCH_BUDGET_MS: '0' } }, async (server, api) => {
    // More users than a statement examines (4,000): with no store time, a short text's page and count stop
    // after one statement each.
    seedUsers(server.store, 9_000);
    for (const path of ['/users?q=99&limit=500', '/users?q=99', '/api/users?q=99&per_page=100']) {
      const first = await api.get(path);
      expect([path, first.status, first.headers.get('x-total-count-relation')]).toEqual([path, 200, 'gte']);
      const before = await lookups(api);
      expect((await api.get(path)).status).toBe(200);
      expect([path, await lookups(api)]).toEqual([path, { hit: before.hit, miss: before.miss + 1 }]);
    }
  }));

test(`at most ${MAX_CACHED_REPLIES} replies are cached; the oldest goes first`, async () => {
  // Query strings of a cache-buster, as a client that wants no cache (or an attacker that wants many) sends.
  const paths = Array.from({ length: MAX_CACHED_REPLIES + 1 }, (_, i) => `/users?_=${i}`);
  for (const path of paths) await sut.api.get(path);
  const before = await lookups(sut.api);
  await sut.api.get(paths[MAX_CACHED_REPLIES]!);
  await sut.api.get(paths[1]!);
  await sut.api.get(paths[0]!);
  expect(await lookups(sut.api)).toEqual({ hit: before.hit + 2, miss: before.miss + 1 });
});

test('replies too long to keep are read each time (a page over 64 KiB, a list that streams), and all cached hold at most 4 Mi characters', () =>
  withTestServer({ dialect: 'sqlite', env: { SEED_DEMO_DATA: 'false' } }, async (server, api) => {
    // 100 users with names of 200 characters and addresses of 240 make a page of 100 of about 66 KiB; 800
    // more make the whole list stream.
    const store = new SqliteDatabase(server.store.sqliteFile!);
    try {
      const insert = store.prepare(
        `insert into users (first_name, first_name_key, last_name, last_name_key, email, email_key, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      const now = new Date().toISOString();
      const add = (first: string, last: string, email: string) =>
        insert.run(first, first.toLowerCase(), last, last.toLowerCase(), email, email.toLowerCase(), now, now);
      store.transaction(() => {
        for (let i = 0; i < 100; i++) add(`F${i}`.padEnd(200, 'f'), `L${i}`.padEnd(200, 'l'), `${`u${i}`.padEnd(228, 'u')}@example.com`);
        for (let i = 0; i < 800; i++) add(`First${i}`, `Last${i}`, `user${i}@example.com`);
      })();
    } finally {
      store.close();
    }
    // Pages just under the bound of one reply, under as many query strings as the bound of them all takes.
    const page = (await api.get('/api/users?per_page=90')).text;
    expect(page.length).toBeLessThan(MAX_CACHED_BODY_CHARS);
    const pages = Array.from({ length: Math.ceil(MAX_CACHED_CHARS / page.length) + 1 }, (_, i) => `/api/users?per_page=90&_=${i}`);
    expect(pages.length).toBeLessThan(MAX_CACHED_REPLIES);
    for (const path of pages) await api.get(path);
    const beforePages = await lookups(api);
    await api.get(pages.at(-1)!);
    await api.get(pages[0]!);
    expect(await lookups(api)).toEqual({ hit: beforePages.hit + 1, miss: beforePages.miss + 1 });
    for (const path of ['/api/users?per_page=100', '/users']) {
      const first = await api.get(path);
      expect(first.text.length).toBeGreaterThan(64 * 1024);
      const before = await lookups(api);
      expect((await api.get(path)).text).toBe(first.text);
      expect(await lookups(api)).toEqual({ hit: before.hit, miss: before.miss + 1 });
    }
  }));
