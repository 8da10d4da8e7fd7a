import { getResponse } from 'msw';
import { createUserRecordsClient, pages, readPage } from '../../client/src/index.js';
import { integerParameters } from '../../client/src/list-pages.js';
import { createMockHandlers } from '../../client/src/msw.js';
import { loadContract } from '../../server/http/contract/ajv-contract.js';
import { useTestServer } from '../support/test-server.js';

// The list helpers against the real server, and against the MSW handlers where a count needs more users than
// a test should write: every page carries the list's count, and the queries of the pages beside it.

const sut = useTestServer();
const client = () => createUserRecordsClient({ baseUrl: sut.server.url });
const ids = (page: { items: readonly { id: number }[] }) => page.items.map((user) => user.id);

test("pages() gives each page the list's total and whether it is exact, in either shape", async () => {
  const counts = [];
  for await (const { total, totalRelation } of pages(client(), '/users', { limit: 5 })) counts.push([total, totalRelation]);
  for await (const { total, totalRelation } of pages(client(), '/api/users', { per_page: 10, q: 'wren' })) counts.push([total, totalRelation]);
  expect(counts).toEqual([
    [12, 'eq'],
    [12, 'eq'],
    [12, 'eq'],
    [1, 'eq'],
  ]);
});

test('a search that matches more users than it counts says so: total is a lower bound, gte', async () => {
  // The handlers start with 10,000 users at most: one more is created, as a frontend would.
  const users = Array.from({ length: 10_000 }, (_, i) => ({ firstName: 'Many', lastName: `User${i}`, email: `many.${i}@example.com` }));
  const handlers = createMockHandlers({ baseUrl: 'http://many.test', users });
  const many = createUserRecordsClient({ baseUrl: 'http://many.test', fetch: async (request) => (await getResponse(handlers, request))! });
  await many.POST('/users', { body: { firstName: 'Many', lastName: 'More', email: 'many.more@example.com' } });
  const { value: first } = await pages(many, '/users', { q: 'many', limit: 5 }).next();
  expect(first).toMatchObject({ total: 10_000, totalRelation: 'gte' });
}, 60_000);

test("readPage() gives shape A's first, prev, next and last as queries that read those pages, filters and order kept", async () => {
  const query = { per_page: 5, sort: '-last_name' } as const;
  const all = (await client().GET('/api/users', { params: { query: { per_page: 100, sort: query.sort } } })).data!.data.map((user) => user.id);
  const first = await readPage(client(), '/api/users', query);
  expect(first).toMatchObject({ total: 12, totalRelation: 'eq', first: { page: 1, per_page: 5, sort: '-last_name' } });
  expect(first.prev).toBeUndefined();
  expect(first.next).toEqual({ page: 2, per_page: 5, sort: '-last_name', cursor: expect.any(String) });
  expect(first.last).toMatchObject({ page: 3, per_page: 5, sort: '-last_name' });
  const second = await readPage(client(), '/api/users', first.next);
  expect(ids(second)).toEqual(all.slice(5, 10));
  expect(ids(await readPage(client(), '/api/users', second.prev))).toEqual(all.slice(0, 5));
  const last = await readPage(client(), '/api/users', first.last);
  expect([ids(last), last.next, last.prev?.page]).toEqual([all.slice(10), undefined, 2]);
});

test("readPage() gives shape B's next, the only relation its Link has, to the end of the list", async () => {
  const query = { limit: 5, sort: 'lastName', q: 'e' } as const;
  const seen: number[][] = [];
  let page = await readPage(client(), '/users', query);
  expect(page.next).toEqual({ ...query, cursor: expect.any(String) });
  for (;;) {
    seen.push(ids(page));
    expect('prev' in page).toBe(false);
    if (page.next === undefined) break;
    page = await readPage(client(), '/users', page.next);
  }
  const whole = await client().GET('/users', { params: { query: { sort: query.sort, q: query.q } } });
  expect(seen.flat()).toEqual(whole.data!.map((user) => user.id));
  expect(seen.length).toBeGreaterThan(1);
});

test("the lists' integer parameters, read back from a link as numbers, are those the contract types as integers", () => {
  const contract = loadContract();
  const integers = ['listDemoUsers', 'listUsers'].flatMap((operationId) =>
    contract
      .operation(operationId)
      .parameters.filter((parameter) => parameter.in === 'query' && parameter.schema.type === 'integer')
      .map((parameter) => parameter.name),
  );
  expect(new Set(integers)).toEqual(integerParameters);
});
