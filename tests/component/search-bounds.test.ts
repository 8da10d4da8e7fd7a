import { seedVariedUsers, variedUser } from '../support/bulk-seed.js';
import { httpClient, type HttpClient, type TestResponse } from '../support/http-client.js';
import { matches, parseSort, sortedBy, type Listed } from '../support/list-reference.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { describeEachDialect, type TestStore } from '../support/test-store.js';

// What bounds a search's cost at any size of store, on both stores: it counts up to 10,000 matches and says
// when its count is a lower bound (X-Total-Count-Relation), and where it examines users one by one it stops
// when its store time (SEARCH_BUDGET_MS) runs out, answering a short page whose links go on from where it
// stopped. Expected lists come from the reference, over the users seeded here.

/** More users than a search counts: 12,000 of the varied population (16 first names, 12 last names). */
const USERS = 12_000;
const PEOPLE: Listed[] = Array.from({ length: USERS }, (_, i) => {
  const [firstName, lastName, email] = variedUser(i);
  return { id: i + 1, firstName, lastName, email };
});

/** The targets of a Link header, by relation. */
function links(header: string | null): Record<string, string> {
  return Object.fromEntries([...(header ?? '').matchAll(/<([^>]*)>; rel="(\w+)"/g)].map(([, target, rel]) => [rel!, target!]));
}

/** Follows one relation of the Link header from a first page to the end; every page's ids, and how many pages were short. */
async function follow(api: HttpClient, first: string, rel: 'next' | 'prev', size: number, data: (body: never) => Array<{ id: number }>) {
  const ids: number[][] = [];
  let short = 0;
  for (let path: string | undefined = first; path !== undefined; ) {
    if (ids.length > 200) throw new Error('the links never end');
    const res: TestResponse<unknown> = await api.get(path);
    expect([path, res.status]).toEqual([path, 200]);
    const page = data(res.body as never).map((user) => user.id);
    ids.push(page);
    path = links(res.headers.get('link'))[rel];
    if (path !== undefined && page.length < size) short++;
  }
  return { ids, short };
}

describeEachDialect((dialect) => {
  let store: TestStore;
  const servers: TestServer[] = [];

  beforeAll(async () => {
    // Migrated by a first start; the users then written straight into it.
    const first = await startTestServer({ dialect, env: { SEED_DEMO_DATA: 'false' } });
    await first.stop();
    store = first.store;
    servers.push(first);
    await seedVariedUsers(store, USERS);
  }, 120_000);

  afterAll(async () => {
    for (const server of servers) await server.stop();
    await servers[0]?.cleanup();
  });

  const serve = async (env: Record<string, string> = {}) => {
    const server = await startTestServer({ dialect, store, env: { SEED_DEMO_DATA: 'false', ...env } });
    servers.push(server);
    return httpClient(server.url);
  };

  test('a search counts up to 10,000 matches, and X-Total-Count-Relation says whether the count is exact', async () => {
    // Store time a loaded machine cannot exhaust: the counts here end by their reach or the store's end, never
    // by their budget (the next test is the budget's).
    const api = await serve({ SEARCH_BUDGET_MS: '10000' });
    const counted = async (path: string) => {
      const res = await api.get(path);
      expect(res.status).toBe(200);
      return [res.headers.get('x-total-count'), res.headers.get('x-total-count-relation')];
    };
    const exactly = (q?: string) => [String(PEOPLE.filter((user) => matches(user, q)).length), 'eq'];
    // Every user: the count the store keeps.
    expect(await counted('/users?limit=1')).toEqual([String(USERS), 'eq']);
    // Through the substring index: under the bound exactly, beyond it 10,000 and "at least".
    expect(await counted('/users?limit=1&q=ann')).toEqual(exactly('ann'));
    expect(await counted('/users?limit=1&q=example')).toEqual(['10000', 'gte']);
    // Examining users one by one (text under three characters): the same bound.
    expect(await counted('/users?limit=1&q=9@')).toEqual(exactly('9@'));
    expect(await counted('/users?limit=1&q=a')).toEqual(['10000', 'gte']);
    // Shape A: total and total_pages agree with the header.
    const page = await api.get('/api/users?per_page=100&q=example');
    expect([page.body.total, page.body.total_pages, page.headers.get('x-total-count-relation')]).toEqual([10000, 100, 'gte']);
    // The complete list streams every match, whatever its count says.
    const all = await api.get('/users?q=example');
    expect([all.body.length, all.headers.get('x-total-count'), all.headers.get('x-total-count-relation')]).toEqual([USERS, '10000', 'gte']);
  }, 60_000);

  test('out of store time, a search answers a short page whose links go on from where it stopped, to every match in order', async () => {
    // No time at all: each page and each count runs one statement, which examines 4,000 users.
    const api = await serve({ SEARCH_BUDGET_MS: '0' });
    for (const sort of ['-lastName', 'firstName,lastName', 'email']) {
      const expected = sortedBy(
        PEOPLE.filter((user) => matches(user, '9@')),
        parseSort(sort),
      ).map((user) => user.id);
      const shapeB = await follow(api, `/users?q=9@&limit=500&sort=${sort}`, 'next', 500, (body: Array<{ id: number }>) => body);
      expect(shapeB.ids.flat()).toEqual(expected);
      expect(shapeB.short).toBeGreaterThan(0);
    }
    // Shape A's pages hold at most 100: text that about one user in 40 holds, in runs, leaves pages short.
    const sort = 'last_name,-first_name';
    const expected = sortedBy(
      PEOPLE.filter((user) => matches(user, '00')),
      parseSort(sort),
    ).map((user) => user.id);
    const forwards = await follow(api, `/api/users?q=00&per_page=100&sort=${sort}`, 'next', 100, (body: { data: Array<{ id: number }> }) => body.data);
    expect(forwards.ids.flat()).toEqual(expected);
    expect(forwards.short).toBeGreaterThan(0);
    // From the last page backwards: pages read backwards stop short too, and `prev` goes on from there.
    const first = await api.get(`/api/users?q=00&per_page=100&sort=${sort}`);
    expect(first.headers.get('x-total-count-relation')).toBe('gte');
    const backwards = await follow(api, links(first.headers.get('link')).last!, 'prev', 100, (body: { data: Array<{ id: number }> }) => body.data);
    expect(backwards.ids.reverse().flat()).toEqual(expected);
    expect(backwards.short).toBeGreaterThan(0);
  }, 120_000);
});
