import fc from 'fast-check';
import { setupServer } from 'msw/node';
import { createMockHandlers } from '../../client/src/msw.js';
import { useTestServer } from '../support/test-server.js';
import { SANDBOX_RESET } from '../support/sandbox-reset.js';

// The MSW handlers run the service's handlers over an in-memory store of their own: the same random sequences
// of creates, changes, deletes and lists go to them and to the real service (a sandbox on SQLite, reset
// between sequences), and every answer must be the same, status, body and headers. The store's rules (case
// folding, code point order, ties by id, keyset pages, ids never reused, versions) are where they could differ.

const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const mockUrl = 'http://msw-differential.test';
const handlers = createMockHandlers({ baseUrl: mockUrl });
const mocks = setupServer(...handlers);
const sut = useTestServer({ env: { SANDBOX: 'true', DATABASE_URL: 'sqlite::memory:' } });
// Only the mock's origin is intercepted: the real server is reached over the network.
beforeAll(() => mocks.listen({ onUnhandledRequest: 'bypass' }));
afterAll(() => mocks.close());

/** Names that fold, sort and compare in the ways the stores must agree on: case, accents, ß, and letters
 * beyond U+FFFF beside ones above the surrogates (code point order and UTF-16 order differ there). */
const NAMES = [
  'ann',
  'Ann',
  'ANN',
  'Änne',
  'änne',
  'Zoë',
  'zoe',
  'Straße',
  'STRASSE',
  '𝒜lpha',
  'alpha',
  'ｚｅｎ',
  'Émile',
  'émile',
  'bob',
  'Bob',
  'b',
  '',
  'Ω',
];
const LOCALS = ['ann', 'ANN', 'zoe', 'b.ob', 'x', 'alpha', 'émile'];
const name = fc.constantFrom(...NAMES);
const email = fc.constantFrom(...LOCALS).map((local) => `${local}@example.com`);
const id = fc.integer({ min: 1, max: 18 });
const search = fc.option(fc.constantFrom('an', 'AN', 'ä', 'ss', 'ß', 'e', 'example', '𝒜', 'zz'), { nil: undefined });
const sortB = fc.option(fc.constantFrom('lastName', '-lastName', 'firstName,-id', 'email,-firstName', '-email', 'id', '-id'), { nil: undefined });
const sortA = fc.option(fc.constantFrom('last_name', '-last_name', 'first_name,-id', 'email,-first_name', '-id'), { nil: undefined });
const query = (entries: Record<string, string | number | undefined>) =>
  new URLSearchParams(
    Object.entries(entries)
      .filter((entry): entry is [string, string | number] => entry[1] !== undefined)
      .map(([k, v]) => [k, String(v)]),
  ).toString();

/** One request of a sequence; lists follow their `next` links, up to a few pages. */
type Step = { method: string; path: string; body?: unknown; headers?: Record<string, string>; follow?: boolean };
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ firstName: name, lastName: name, email }).map((body) => ({ method: 'POST', path: '/users', body })),
  fc.record({ name: fc.tuple(name, name).map(([a, b]) => `${a} ${b}`), email }).map((body) => ({ method: 'POST', path: '/api/users', body })),
  fc.tuple(id, fc.record({ firstName: name, email }, { requiredKeys: [] })).map(([i, body]) => ({ method: 'PATCH', path: `/users/${i}`, body })),
  fc
    .tuple(id, fc.record({ name: name.filter((n) => n.trim() !== ''), email }))
    .map(([i, body]) => ({ method: 'PUT', path: `/api/users/${i}`, body, headers: { 'If-Match': '"1"' } })),
  id.map((i) => ({ method: 'DELETE', path: `/users/${i}` })),
  fc
    .record({ q: search, sort: sortB, limit: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }), email: fc.option(email, { nil: undefined }) })
    .map((q) => ({ method: 'GET', path: `/users?${query(q)}`, follow: true })),
  fc
    .record({ q: search, sort: sortA, per_page: fc.integer({ min: 1, max: 7 }), page: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }) })
    .map((q) => ({ method: 'GET', path: `/api/users?${query(q)}`, follow: true })),
  id.map((i) => ({ method: 'GET', path: `/api/users/${i}` })),
);

const COMPARED_HEADERS = ['content-type', 'etag', 'location', 'link', 'x-total-count', 'idempotent-replayed'];

/** An answer as compared: status, the headers that are the service's, and the body with its moments left out. */
async function seen(response: Response) {
  const text = await response.text();
  const body = text === '' ? undefined : JSON.parse(text);
  for (const stamp of ['createdAt', 'updatedAt']) if (body && typeof body[stamp] === 'string') body[stamp] = '<moment>';
  return { status: response.status, headers: Object.fromEntries(COMPARED_HEADERS.map((h) => [h, response.headers.get(h)])), body };
}

async function run(baseUrl: string, steps: readonly Step[]) {
  const answers: unknown[] = [];
  for (const { method, path, body, headers, follow } of steps) {
    let target: string | undefined = path;
    for (let page = 0; target !== undefined && page < 4; page++) {
      const response = await fetch(`${baseUrl}${target}`, {
        method,
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const answer = await seen(response);
      answers.push({ request: `${method} ${target}`, ...answer });
      target = follow ? /<([^>]*)>; rel="next"/.exec(answer.headers.link ?? '')?.[1] : undefined;
    }
  }
  return answers;
}

test('random sequences get the same answers from the MSW handlers and from the service', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 14 }), async (steps) => {
      handlers.reset();
      expect((await fetch(`${sut.server.url}/__sandbox/reset`, SANDBOX_RESET)).status).toBe(204);
      expect(await run(mockUrl, steps)).toEqual(await run(sut.server.url, steps));
    }),
    { seed: SEED, numRuns: 120 },
  );
}, 120_000);

test.each([
  [
    'code point order, where UTF-16 order differs',
    [
      ['𝒜lpha', 'A'],
      ['ｚｅｎ', 'Z'],
    ],
    'firstName',
  ],
  [
    'case folding, in names and addresses',
    [
      ['ÉMILE', 'Émile'],
      ['émile', 'emile'],
      ['STRASSE', 'Straße'],
    ],
    '-lastName,firstName',
  ],
])('the same order as the service: %s', async (_case, people, sort) => {
  const steps: Step[] = [
    ...people.map(([firstName, lastName]) => ({
      method: 'POST',
      path: '/users',
      body: { firstName, lastName, email: `${lastName!.toLowerCase()}@example.com` },
    })),
    { method: 'GET', path: `/users?sort=${sort}&limit=4`, follow: true },
    { method: 'GET', path: `/users?q=${encodeURIComponent(people[0]![0]!.toLowerCase())}` },
  ];
  handlers.reset();
  await fetch(`${sut.server.url}/__sandbox/reset`, SANDBOX_RESET);
  expect(await run(mockUrl, steps)).toEqual(await run(sut.server.url, steps));
});

test.each([
  ['an empty body', ''],
  ['white space', '  \n'],
  ['a cut-short body', '{"firstName":'],
  ['__proto__', '{"__proto__":{"polluted":true},"firstName":"A","lastName":"B","email":"a@example.com"}'],
  ['a JSON string', '"text"'],
])('the same refusal as the service for %s', async (_case, raw) => {
  const send = async (baseUrl: string) => seen(await fetch(`${baseUrl}/users`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw }));
  expect(await send(mockUrl)).toEqual(await send(sut.server.url));
});
