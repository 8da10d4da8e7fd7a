import SqliteDatabase from 'better-sqlite3';
import { CHECKED_CANDIDATES } from '../../server/db/sqlite/search-index.js';
import { httpClient, type HttpClient, type TestResponse } from '../support/http-client.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import type { TestStore } from '../support/test-store.js';

// Every way SQLite's trigram index is asked for a text (server/db/sqlite/search-index.ts) finds exactly the
// users that hold it: the exact phrase; the rarest trigrams, each user they find checked against the whole
// text; and, when they find more users to check than the index checks, users examined in order instead.
// Decoys hold every trigram of a text, but not the text (its trigrams are split between two names).

let server: TestServer;
let store: TestStore;
let api: HttpClient;

/** Writes users straight into the migrated file: [first name, last name] each, their address made unique. */
function insertUsers(names: ReadonlyArray<readonly [string, string]>): number[] {
  const db = new SqliteDatabase(store.sqliteFile!);
  try {
    const now = new Date().toISOString();
    const insert = db.prepare(
      'INSERT INTO users (first_name, first_name_key, last_name, last_name_key, email, email_key, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    return db.transaction(() =>
      names.map(([first, last], i) => {
        const email = `plan${i}.${first.toLowerCase()}@example.org`;
        return Number(insert.run(first, first.toLowerCase(), last, last.toLowerCase(), email, email, now, now).lastInsertRowid);
      }),
    )();
  } finally {
    db.close();
  }
}

/** Every id a search lists, following its links to the end, and its count. */
async function searchAll(q: string) {
  const ids: number[] = [];
  let count: [string | null, string | null] | undefined;
  for (let path: string | undefined = `/users?q=${encodeURIComponent(q)}&limit=5`; path !== undefined; ) {
    const res: TestResponse<unknown> = await api.get(path);
    expect(res.status).toBe(200);
    count ??= [res.headers.get('x-total-count'), res.headers.get('x-total-count-relation')];
    ids.push(...(res.body as Array<{ id: number }>).map((user) => user.id));
    path = /<([^>]*)>; rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
  }
  return { ids, count };
}

beforeAll(async () => {
  const first = await startTestServer({ dialect: 'sqlite', env: { SEED_DEMO_DATA: 'false' } });
  await first.stop();
  store = first.store;
  // What each plan finds, not how far it gets in the default 50 ms of store time: on a busy machine the count of
  // the examined 10,001 users ran out of its half of that (an inexact count of 0; search-bounds.test.ts tests
  // the budget itself).
  server = await startTestServer({ dialect: 'sqlite', store, env: { SEED_DEMO_DATA: 'false', SEARCH_BUDGET_MS: '10000' } });
  api = httpClient(server.url);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await server?.cleanup();
});

test('the exact phrase finds only the users that hold the whole text', async () => {
  const [holder] = insertUsers([['Mnop', 'Holder'], ...Array.from({ length: 5 }, () => ['Mnox', 'Xnop'] as const)]);
  expect(await searchAll('mnop')).toEqual({ ids: [holder], count: ['1', 'eq'] });
});

test('users found by the rarest trigrams are checked against the whole text', async () => {
  // Longer than the phrase the index asks for: it asks for the rarest trigrams, which every decoy holds.
  const [holder] = insertUsers([['Qrstuvwxyz', 'Holder'], ...Array.from({ length: 10 }, () => ['Qrstuvw', 'Vwxyz'] as const)]);
  expect(await searchAll('qrstuvwxyz')).toEqual({ ids: [holder], count: ['1', 'eq'] });
});

test('with more users to check than the index checks, the search examines users in order and still finds every holder', async () => {
  insertUsers(Array.from({ length: CHECKED_CANDIDATES + 1 }, () => ['Abcdefgh', 'Fghi'] as const));
  const [holder] = insertUsers([['Abcdefghi', 'Holder']]);
  expect(await searchAll('abcdefghi')).toEqual({ ids: [holder], count: ['1', 'eq'] });
}, 60_000);
