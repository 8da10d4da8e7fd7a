import { sql } from 'kysely';
import { httpClient, type HttpClient, type TestResponse } from '../support/http-client.js';
import { fold, matches, sortedBy, type ListSort } from '../support/list-reference.js';
import { insertWithoutKeys, withoutSortKeys, withReindexOnEveryUpdate } from '../support/older-store.js';
import { startTestServer, useTestServer } from '../support/test-server.js';
import { describeEachDialect, type Dialect } from '../support/test-store.js';

// The list vocabulary on both shapes and both stores: q, email, sort, shape B's limit and cursor, shape A's
// Link relations, and X-Total-Count. Expected lists come from a reference written here, over the users the
// test created, never from the service.

interface Person {
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
}

const PEOPLE: readonly Person[] = [
  { firstName: 'Émile', lastName: 'Zola', email: 'emile.zola@example.com' },
  { firstName: 'alice', lastName: 'Smith', email: 'Alice.Smith@Example.com' },
  { firstName: 'Bob', lastName: 'smith', email: 'bob@example.org' },
  { firstName: 'Carol', lastName: "O'Neil", email: 'carol@example.net' },
  { firstName: 'Dan', lastName: '100%_Sure', email: 'dan@example.com' },
  { firstName: 'Eve', lastName: 'Smith', email: 'dup@example.com' },
  { firstName: 'Frank', lastName: 'Wren', email: 'DUP@example.com' },
  { firstName: 'Ägir', lastName: 'Ökland', email: 'agir@example.com' },
  { firstName: 'bob', lastName: 'Young', email: 'young@example.com' },
  { firstName: 'Zoë', lastName: 'Adams', email: 'zoe.adams@example.com' },
  { firstName: 'Eve', lastName: 'Adams', email: 'eve.adams@example.com' },
  { firstName: 'Mallory', lastName: 'Smithers', email: 'mallory@smith.example' },
  { firstName: 'Trent', lastName: 'Zola', email: 'trent@example.com' },
  { firstName: 'Oscar', lastName: 'Wilde', email: 'oscar@example.com' },
];

type Stored = Person & { readonly id: number };

const matching = (users: readonly Stored[], q: string) => users.filter((user) => matches(user, q));

/** A cursor of layout 2 (server/handlers/cursors.ts) of these bytes after the layout's own. */
const layout2 = (...bytes: number[]) => Buffer.from([2, ...bytes]).toString('base64url');

/** The targets of a Link header, by relation. */
function links(header: string | null): Record<string, string> {
  return Object.fromEntries([...(header ?? '').matchAll(/<([^>]*)>; rel="(\w+)"/g)].map(([, target, rel]) => [rel!, target!]));
}

/** Follows `next` links from a first page of shape B to the end; returns every user, in order. */
async function walkShapeB(api: HttpClient, first: string): Promise<number[]> {
  const ids: number[] = [];
  for (let path: string | undefined = first, pages = 0; path !== undefined; pages++) {
    if (pages > 100) throw new Error('the links never end');
    const res: TestResponse<Stored[]> = await api.get(path);
    expect(res.status).toBe(200);
    ids.push(...res.body.map((user: Stored) => user.id));
    path = links(res.headers.get('link')).next;
  }
  return ids;
}

describeEachDialect((dialect) => {
  const sut = useTestServer({ dialect, env: { SEED_DEMO_DATA: 'false' } });
  let stored: Stored[] = [];
  const ids = (users: readonly Stored[]) => users.map((user) => user.id);

  beforeAll(async () => {
    stored = [];
    for (const person of PEOPLE) stored.push((await sut.api.post('/users', person)).body);
  });

  describe('q: a case-insensitive substring of first name, last name or e-mail address', () => {
    test.each([
      ['smith', 'in last names and addresses, any case'],
      ['SMITH', 'upper case finds lower'],
      ['émile', 'letters beyond A-Z fold too'],
      ['ÖKLAND', 'and upper case beyond A-Z'],
      ['%_', 'wildcards of LIKE are plain characters'],
      ['example.com', 'in addresses'],
      ["o'n", 'quotes are plain characters'],
      ['nobody-has-this', 'nothing matches'],
    ])('%s: %s', async (q) => {
      const expected = matching(stored, q);
      const b = await sut.api.get(`/users?q=${encodeURIComponent(q)}`);
      expect(b.status).toBe(200);
      expect(b.body.map((user: Stored) => user.id)).toEqual(ids(expected));
      expect(b.headers.get('x-total-count')).toBe(String(expected.length));
      const a = await sut.api.get(`/api/users?q=${encodeURIComponent(q)}&per_page=100`);
      expect(a.body.data.map((user: Stored) => user.id)).toEqual(ids(expected));
      expect(a.body).toMatchObject({ total: expected.length, total_pages: Math.ceil(expected.length / 100) });
      expect(a.headers.get('x-total-count')).toBe(String(expected.length));
    });
  });

  test('q finds users as they are now: once created, by their new names after PUT and PATCH, and not once deleted', async () => {
    const found = async (q: string) => {
      const b = await sut.api.get(`/users?q=${encodeURIComponent(q)}`);
      const a = await sut.api.get(`/api/users?q=${encodeURIComponent(q)}`);
      expect(a.body.data.map((user: Stored) => user.id)).toEqual(b.body.map((user: Stored) => user.id));
      expect(b.headers.get('x-total-count')).toBe(String(b.body.length));
      return b.body.map((user: Stored) => user.id);
    };
    const { id } = (await sut.api.post('/users', { firstName: 'Quentin', lastName: 'Xylophone', email: 'qx@example.com' })).body;
    expect(await found('XYLOPH')).toEqual([id]);
    await sut.api.put(`/users/${id}`, { firstName: 'Quentin', lastName: 'Marimba', email: 'qx@example.com' });
    expect(await found('xyloph')).toEqual([]);
    expect(await found('marimb')).toEqual([id]);
    // The same names again, and a change of case only (the folded copies the index holds stay as they were):
    // found as before, by any of them.
    await sut.api.put(`/users/${id}`, { firstName: 'Quentin', lastName: 'Marimba', email: 'qx@example.com' });
    await sut.api.put(`/users/${id}`, { firstName: 'QUENTIN', lastName: 'marimba', email: 'QX@example.com' });
    for (const q of ['quent', 'MARIMB', 'qx@exa']) expect(await found(q)).toEqual([id]);
    const patched = await sut.api.request('PATCH', `/users/${id}`, { json: { email: 'glockenspiel@example.com' } });
    expect(patched.status).toBe(200);
    expect(await found('glocken')).toEqual([id]);
    expect(await found('marimb')).toEqual([id]);
    expect(await found('qx@exa')).toEqual([]);
    await sut.api.delete(`/users/${id}`);
    expect(await found('marimb')).toEqual([]);
    expect(await found('glocken')).toEqual([]);
  });

  test('email: the whole address, in any case, on both shapes', async () => {
    const dups = stored.filter((user) => fold(user.email) === 'dup@example.com');
    expect(dups).toHaveLength(2);
    for (const email of ['dup@example.com', 'DUP@EXAMPLE.COM']) {
      const b = await sut.api.get(`/users?email=${encodeURIComponent(email)}`);
      expect(b.body.map((user: Stored) => user.id)).toEqual(ids(dups));
      expect(b.headers.get('x-total-count')).toBe('2');
      const a = await sut.api.get(`/api/users?email=${encodeURIComponent(email)}`);
      expect(a.body.data.map((user: Stored) => user.id)).toEqual(ids(dups));
      expect(a.body.total).toBe(2);
    }
    // Not a substring: part of an address finds nobody.
    expect((await sut.api.get('/users?email=dup@example')).body).toEqual([]);
    // With q, a user must match both.
    const both = await sut.api.get('/users?email=dup@example.com&q=wren');
    expect(both.body.map((user: Stored) => user.id)).toEqual(ids(dups.filter((user) => user.lastName === 'Wren')));
  });

  describe('sort', () => {
    test.each<[string, string, ListSort]>([
      ['email', 'email', [['email', false]]],
      ['-email', '-email', [['email', true]]],
      ['firstName', 'first_name', [['firstName', false]]],
      ['-firstName', '-first_name', [['firstName', true]]],
      [
        'lastName,firstName',
        'last_name,first_name',
        [
          ['lastName', false],
          ['firstName', false],
        ],
      ],
      [
        '-lastName,firstName',
        '-last_name,first_name',
        [
          ['lastName', true],
          ['firstName', false],
        ],
      ],
      [
        'lastName,-id',
        'last_name,-id',
        [
          ['lastName', false],
          ['id', true],
        ],
      ],
      ['-id', '-id', [['id', true]]],
      ['firstName,firstName,-firstName', 'first_name,first_name', [['firstName', false]]],
    ])('%s (shape A: %s)', async (sortB, sortA, keys) => {
      const expected = ids(sortedBy(stored, keys));
      const b = await sut.api.get(`/users?sort=${sortB}`);
      expect(b.body.map((user: Stored) => user.id)).toEqual(expected);
      const a = await sut.api.get(`/api/users?sort=${sortA}&per_page=100`);
      expect(a.body.data.map((user: Stored) => user.id)).toEqual(expected);
    });

    test('sorts combine with filters', async () => {
      const expected = ids(sortedBy(matching(stored, 'smith'), [['firstName', true]]));
      expect((await sut.api.get('/users?q=smith&sort=-firstName')).body.map((user: Stored) => user.id)).toEqual(expected);
    });
  });

  describe('shape B: limit and cursor', () => {
    test('without more users, no Link', async () => {
      const res = await sut.api.get(`/users?limit=${PEOPLE.length}`);
      expect(res.body).toHaveLength(PEOPLE.length);
      expect(res.headers.get('link')).toBeNull();
      expect(res.headers.get('x-total-count')).toBe(String(PEOPLE.length));
    });

    test.each([
      '/users?limit=1',
      '/users?limit=4&sort=-lastName,firstName',
      '/users?limit=2&q=smith&sort=email',
      '/users?limit=3&q=e',
      '/users?limit=1&email=DUP@example.com',
    ])('following next from %s reads the same list as without limit', async (first) => {
      const whole = first.replace(/limit=\d+&?/, '').replace(/\?$/, '');
      const expected = (await sut.api.get(whole)).body.map((user: Stored) => user.id);
      expect(expected.length).toBeGreaterThan(0);
      expect(await walkShapeB(sut.api, first)).toEqual(expected);
    });

    test('a page holds limit users, the link repeats the query, and X-Total-Count counts every match', async () => {
      const res = await sut.api.get('/users?q=smith&limit=2&sort=email');
      expect(res.body).toHaveLength(2);
      expect(res.headers.get('x-total-count')).toBe(String(matching(stored, 'smith').length));
      const next = new URL(links(res.headers.get('link')).next!, 'http://x');
      expect(next.pathname).toBe('/users');
      expect(Object.fromEntries(next.searchParams)).toEqual({ q: 'smith', sort: 'email', limit: '2', cursor: expect.stringMatching(/^[A-Za-z0-9_-]+$/) });
    });

    test.each([
      ['/users?limit=0', '/limit'],
      ['/users?limit=1001', '/limit'],
      ['/users?limit=two', '/limit'],
      ['/users?sort=name', '/sort'],
      ['/users?sort=email,', '/sort'],
      ['/users?q=', '/q'],
      [`/users?q=${'x'.repeat(101)}`, '/q'],
      ['/users?q=%07', '/q'],
      ['/users?email=', '/email'],
      ['/users?limit=2&cursor=not!base64', '/cursor'],
      ['/users?limit=2&cursor=e30', '/cursor'],
      [`/users?limit=2&cursor=${Buffer.from('[1,"id","a",["x"]]').toString('base64url')}`, '/cursor'],
      [`/users?limit=2&cursor=${Buffer.from('[1,"email","a",["x",1]]').toString('base64url')}`, '/cursor'],
      [`/users?limit=2&cursor=${Buffer.from('[1,"id","z",[1]]').toString('base64url')}`, '/cursor'],
      [`/users?limit=2&cursor=${Buffer.from('[2,"id","a",[1]]').toString('base64url')}`, '/cursor'],
      [`/users?cursor=${Buffer.from('[1,"id","a",[1]]').toString('base64url')}`, '/cursor'],
      // Layout 2, bytes: each position has one cursor, and only keys a store can hold.
      [`/users?limit=2&cursor=${layout2(0, 1, 0, 0x8c, 0)}`, '/cursor'], // 12 in two bytes
      [`/users?limit=2&cursor=${layout2(0, 1, 0, 12, 0)}`, '/cursor'], // a byte after the keys
      [`/users?limit=2&cursor=${layout2(0, 1, 0, 12).slice(0, -1)}B`, '/cursor'], // spare bits set
      [`/users?limit=2&cursor=${layout2(0, 1, 0)}`, '/cursor'], // no key
      [`/users?limit=2&cursor=${layout2(0, 2, 0, 0, 1, 2)}`, '/cursor'], // id twice
      [`/users?limit=2&cursor=${layout2(0, 1, 2, 1, 0x61)}`, '/cursor'], // an order that does not end with id
      [`/users?limit=2&cursor=${layout2(3, 1, 0, 12)}`, '/cursor'], // no such direction
      [`/users?limit=2&cursor=${layout2(0, 2, 3, 0, 1, 0x80, 0xb0, 0x03, 1)}`, '/cursor'], // a lone surrogate
      [`/users?limit=2&cursor=${layout2(0, 2, 3, 0, 1, 0x80, 0x80, 0x44, 1)}`, '/cursor'], // past U+10FFFF
      [`/users?limit=2&cursor=${'A'.repeat(1964)}`, '/cursor'], // longer than any cursor a list makes
    ])('%s is a 400 that names %s', async (path, parameter) => {
      const res = await sut.api.get(path);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ type: 'urn:user-records:problem:invalid-parameter', errors: [expect.objectContaining({ path: parameter })] });
    });

    test('a cursor of layout 1, as the service wrote it before, reads the same page as the one it writes now', async () => {
      const first = await sut.api.get('/users?limit=2&sort=-lastName');
      const cursor = new URL(links(first.headers.get('link')).next!, 'http://x').searchParams.get('cursor')!;
      expect(cursor).toMatch(/^A/);
      const last = first.body[1] as Stored;
      const older = Buffer.from(JSON.stringify([1, '-lastName,-id', 'a', [fold(last.lastName), last.id]])).toString('base64url');
      const [now, before] = [await sut.api.get(`/users?limit=2&cursor=${cursor}`), await sut.api.get(`/users?limit=2&cursor=${older}`)];
      expect(now.status).toBe(200);
      expect(before.body).toEqual(now.body);
      expect(before.headers.get('link')).toBe(now.headers.get('link'));
    });

    test('a cursor made for one sort is refused with another', async () => {
      const first = await sut.api.get('/users?limit=2&sort=email');
      const next = new URL(links(first.headers.get('link')).next!, 'http://x');
      const cursor = next.searchParams.get('cursor')!;
      const other = await sut.api.get(`/users?limit=2&sort=-email&cursor=${cursor}`);
      expect(other.status).toBe(400);
      expect(other.body.detail).toMatch(/another sort/);
      // Without sort, the cursor's own order is used.
      const same = await sut.api.get(`/users?limit=2&cursor=${cursor}`);
      expect(same.body.map((user: Stored) => user.id)).toEqual(ids(sortedBy(stored, [['email', false]]).slice(2, 4)));
    });

    test('a user deleted or created between pages makes no page repeat or skip anyone', async () => {
      const extra = (await sut.api.post('/users', { firstName: 'Temp', lastName: 'Orary', email: 'temp@example.com' })).body as Stored;
      const first = await sut.api.get('/users?limit=5');
      const seen: number[] = first.body.map((user: Stored) => user.id);
      // Delete one already read and one not yet read, and create one after the end.
      await sut.api.delete(`/users/${seen[1]}`);
      await sut.api.delete(`/users/${extra.id}`);
      const late = (await sut.api.post('/users', { firstName: 'Late', lastName: 'Comer', email: 'late@example.com' })).body as Stored;
      const rest = await walkShapeB(sut.api, links(first.headers.get('link')).next!);
      expect(rest.filter((id) => seen.includes(id))).toEqual([]);
      const expected = ids(stored)
        .filter((id) => !seen.includes(id))
        .concat(late.id);
      expect(rest).toEqual(expected);
      // Put the store back as the other tests expect it.
      await sut.api.delete(`/users/${late.id}`);
      const deleted = stored.find((user) => user.id === seen[1])!;
      stored = stored
        .filter((user) => user !== deleted)
        .concat((await sut.api.post('/users', { firstName: deleted.firstName, lastName: deleted.lastName, email: deleted.email })).body);
    });
  });

  describe('shape A: Link first, prev, next, last', () => {
    const pageOf = async (path: string) => {
      const res = await sut.api.get(path);
      expect(res.status).toBe(200);
      return { body: res.body, links: links(res.headers.get('link')) };
    };

    test('next from page 1 to the end, and prev from last back to page 1, read the list by number', async () => {
      const query = 'per_page=3&sort=-last_name,first_name&q=e';
      const expected = ids(
        sortedBy(matching(stored, 'e'), [
          ['lastName', true],
          ['firstName', false],
        ]),
      );
      const byNumber: number[][] = [];
      const pages = Math.ceil(expected.length / 3);
      for (let page = 1; page <= pages; page++) byNumber.push((await pageOf(`/api/users?page=${page}&${query}`)).body.data.map((user: Stored) => user.id));
      expect(byNumber.flat()).toEqual(expected);

      const forwards: number[][] = [];
      let current = await pageOf(`/api/users?${query}`);
      expect(current.links.prev).toBeUndefined();
      for (;;) {
        forwards.push(current.body.data.map((user: Stored) => user.id));
        expect(current.body).toMatchObject({ page: forwards.length, per_page: 3, total: expected.length, total_pages: pages });
        if (!current.links.next) break;
        current = await pageOf(current.links.next);
      }
      expect(forwards).toEqual(byNumber);

      const backwards: number[][] = [];
      current = await pageOf(current.links.last!);
      for (;;) {
        backwards.unshift(current.body.data.map((user: Stored) => user.id));
        if (!current.links.prev) break;
        current = await pageOf(current.links.prev);
      }
      expect(backwards).toEqual(byNumber);
    });

    test('first and last are always there; prev and next only where those pages exist', async () => {
      const only = await pageOf('/api/users?per_page=100');
      expect(Object.keys(only.links).sort()).toEqual(['first', 'last']);
      expect(only.links.first).toBe('/api/users?page=1&per_page=100');
      expect(only.links.last).toBe(only.links.first);
      const none = await pageOf('/api/users?q=nobody-has-this');
      expect(none.body).toMatchObject({ total: 0, total_pages: 0, data: [] });
      expect(Object.keys(none.links).sort()).toEqual(['first', 'last']);
      const middle = await pageOf('/api/users?page=2&per_page=2');
      expect(Object.keys(middle.links).sort()).toEqual(['first', 'last', 'next', 'prev']);
      // From page 2, prev is page 1 itself.
      expect(middle.links.prev).toBe('/api/users?page=1&per_page=2');
      const last = await pageOf(middle.links.last!);
      expect(last.body.page).toBe(Math.ceil(stored.length / 2));
      expect(last.body.data.map((user: Stored) => user.id)).toEqual(ids(stored).slice((last.body.page - 1) * 2));
      expect(last.links.next).toBeUndefined();
    });

    test('a page past the last one is empty and links back into the list', async () => {
      const past = await pageOf('/api/users?page=50&per_page=5');
      expect(past.body.data).toEqual([]);
      expect(past.links.next).toBeUndefined();
      expect(past.links.prev).toBe(`/api/users?page=${Math.ceil(stored.length / 5)}&per_page=5`);
    });
  });
});

describeEachDialect((dialect: Dialect) => {
  test('a store from before the sort keys has them filled in for every user when it is migrated', async () => {
    const first = await startTestServer({ dialect, env: { SEED_DEMO_DATA: 'true' } });
    try {
      await withoutSortKeys(first.database.db, dialect);
      // Users stored while there were no keys: more than one batch of the migration.
      const earlier = Array.from({ length: 1203 }, (_, i) => ({
        firstName: `Earlier${i}`,
        lastName: i % 2 ? 'ÖDD' : 'Even',
        email: `Earlier${i}@Example.com`,
      }));
      await insertWithoutKeys(first.database.db, earlier);
      await first.stop();
      const again = await startTestServer({ dialect, store: first.store });
      try {
        const api = httpClient(again.url);
        expect((await api.get('/users?q=ödd')).headers.get('x-total-count')).toBe('601');
        expect((await api.get('/users?email=earlier1202@example.com')).body).toHaveLength(1);
        const sorted = await api.get('/users?sort=-email&limit=1');
        expect(sorted.body[0].email).toBe('tobias.wren@example.com');
        // A user created now sorts among them by the same keys.
        await api.post('/users', { firstName: 'Now', lastName: 'Ödd', email: 'now@example.com' });
        expect((await api.get('/users?q=Ödd')).headers.get('x-total-count')).toBe('602');
      } finally {
        await again.stop();
      }
    } finally {
      await first.cleanup();
    }
  }, 60_000);
});

describe('SQLite substring index', () => {
  test('a store from before it re-indexed only changed users is migrated to: an update that keeps the folded names and address writes nothing to the index, a change does', async () => {
    const first = await startTestServer({ dialect: 'sqlite', env: { SEED_DEMO_DATA: 'true' } });
    try {
      await withReindexOnEveryUpdate(first.database.db, 'sqlite');
      await first.stop();
      const again = await startTestServer({ dialect: 'sqlite', store: first.store });
      try {
        const api = httpClient(again.url);
        // FTS5 writes a segment of its index at each commit that changed it: the blocks it holds tell.
        const blocks = async () =>
          (await sql<{ blocks: string }>`select group_concat(id || ':' || length(block)) as blocks from users_search_data`.execute(again.database.db)).rows[0]!
            .blocks;
        const before = await blocks();
        expect((await api.put('/users/2', { firstName: 'TOBIAS', lastName: 'wren', email: 'Tobias.Wren@example.com' })).status).toBe(200);
        expect((await api.request('PATCH', '/users/3', { json: { firstName: (await api.get('/users/3')).body.firstName } })).status).toBe(200);
        expect(await blocks()).toBe(before);
        expect((await api.get('/users?q=tobias')).body.map((user: Stored) => user.id)).toEqual([2]);
        expect((await api.put('/users/2', { firstName: 'Tobiah', lastName: 'Wren', email: 'tobias.wren@example.com' })).status).toBe(200);
        expect(await blocks()).not.toBe(before);
        expect((await api.get('/users?q=tobiah')).body.map((user: Stored) => user.id)).toEqual([2]);
        expect((await api.get('/users?q=tobias')).body.map((user: Stored) => user.id)).toEqual([2]);
      } finally {
        await again.stop();
      }
    } finally {
      await first.cleanup();
    }
  }, 60_000);
});

describeEachDialect((dialect: Dialect) => {
  const sut = useTestServer({ dialect, env: { SEED_DEMO_DATA: 'true' } });

  test('parameters other tools filter or page with are refused, naming each; other unknown ones are ignored', async () => {
    // Ignored, `?firstName=Mira` answered all 12 demo users, and `_page=2` the first page again.
    const byField = await sut.api.get('/users?firstName=Mira&_limit=2', { unchecked: true });
    expect(byField.status).toBe(400);
    expect(byField.body.type).toBe('urn:user-records:problem:invalid-parameter');
    expect(byField.body.errors.map((error: { path: string }) => error.path)).toEqual(['/firstName', '/_limit']);
    expect(byField.body.errors[0].message).toMatch(/page with limit and cursor$/);
    const paged = await sut.api.get('/api/users?_page=2&limit=5', { unchecked: true });
    expect(paged.status).toBe(400);
    expect(paged.body.errors.map((error: { path: string }) => error.path)).toEqual(['/_page', '/limit']);
    expect(paged.body.errors[0].message).toMatch(/page with page and per_page$/);
    // Shape A's paging on shape B, shape B's on shape A.
    expect((await sut.api.get('/users?per_page=101', { unchecked: true })).status).toBe(400);
    // A cache-buster, and any other unknown name, changes nothing.
    const busted = await sut.api.get('/users?_=1700000000&t=1');
    expect([busted.status, busted.body.length]).toEqual([200, 12]);
  });
});
