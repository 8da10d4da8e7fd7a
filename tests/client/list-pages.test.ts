import { getResponse } from 'msw';
import { createUserRecordsClient, pages } from '../../client/src/index.js';
import { createMockHandlers } from '../../client/src/msw.js';
import { useTestServer } from '../support/test-server.js';

// The list helpers against the real server, and against the MSW handlers where a count needs more users than
// a test should write: every page carries the list's count.

const sut = useTestServer();
const client = () => createUserRecordsClient({ baseUrl: sut.server.url });

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
