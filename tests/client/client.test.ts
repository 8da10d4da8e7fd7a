import { changeUser, createUserRecordsClient, pages, sortFields, type ListPath, type ListQuery } from '../../client/src/index.js';
import { loadContract } from '../../server/http/contract/ajv-contract.js';
import { freePort } from '../support/ports.js';
import { TEST_CREDENTIALS, useTestServer, withTestServer } from '../support/test-server.js';

// The client package against the real server: nothing is faked; a recording fetch only watches.

const sut = useTestServer();

function recordingFetch() {
  const seen: Request[] = [];
  const fetchAndRecord = (request: Request) => {
    seen.push(request.clone());
    return fetch(request);
  };
  return { seen, fetch: fetchAndRecord };
}

test('credentials go only to the operations whose security requires them', async () => {
  const recorder = recordingFetch();
  const client = createUserRecordsClient({ baseUrl: sut.server.url, credentials: TEST_CREDENTIALS, fetch: recorder.fetch });
  await client.GET('/users/{id}', { params: { path: { id: 1 } } });
  await client.GET('/api/users');
  await client.POST('/users', { body: { firstName: 'A', lastName: 'B', email: 'a@example.com' } });
  const secured = await client.GET('/protected-resource', { parseAs: 'text' });
  await client.GET('/api/protected-resource', { parseAs: 'text' });
  expect(secured.data).toBe(`Hello, ${TEST_CREDENTIALS.username}. You are authenticated.`);
  expect(recorder.seen.map((r) => [new URL(r.url).pathname, r.headers.has('authorization')])).toEqual([
    ['/users/1', false],
    ['/api/users', false],
    ['/users', false],
    ['/protected-resource', true],
    ['/api/protected-resource', true],
  ]);
});

test('headers given at creation go with every request', async () => {
  const recorder = recordingFetch();
  const client = createUserRecordsClient({ baseUrl: sut.server.url, headers: { 'x-custom-header': 'team-a' }, fetch: recorder.fetch });
  const { response } = await client.GET('/users/{id}', { params: { path: { id: 2 } } });
  expect(response.status).toBe(200);
  expect(recorder.seen[0]!.headers.get('x-custom-header')).toBe('team-a');
});

test('error statuses come back as typed problems, not exceptions', async () => {
  const client = createUserRecordsClient({ baseUrl: sut.server.url });
  const { data, error, response } = await client.POST('/api/users', { body: { name: 'A B', email: 'nope' } });
  expect(data).toBeUndefined();
  expect(response.status).toBe(422);
  expect(error?.status).toBe(422);
  expect(error?.detail).toBe('The request body does not match the schema.');
  expect(error?.errors).toEqual([
    { path: '/email', message: 'must be an e-mail address such as ann@example.com (a domain with a dot; no quotes or IP addresses)' },
  ]);
});

test('a conditional GET with the ETag held is "not modified", no error; the ETag comes typed in headers', async () => {
  const client = createUserRecordsClient({ baseUrl: sut.server.url });
  const first = await client.GET('/users/{id}', { params: { path: { id: 2 } } });
  if (first.status !== 200) throw new Error(`expected 200, got ${first.status}`);
  const etag: string = first.headers.ETag;
  expect(etag).toBe(first.response.headers.get('etag'));
  const again = await client.GET('/users/{id}', { params: { path: { id: 2 }, header: { 'If-None-Match': etag } } });
  expect(again).toMatchObject({ status: 304, notModified: true, data: undefined, error: undefined, headers: { ETag: etag } });
  const demo = await client.GET('/api/users/{id}', { params: { path: { id: 2 }, header: { 'If-None-Match': etag } } });
  expect(demo).toMatchObject({ status: 304, notModified: true, error: undefined });
});

test('answers are told apart by status: a 404 carries its problem, a list its counts as numbers', async () => {
  const client = createUserRecordsClient({ baseUrl: sut.server.url });
  const missing = await client.GET('/users/{id}', { params: { path: { id: 999_999 } } });
  expect(missing.status).toBe(404);
  if (missing.status === 404) expect(missing.error.type).toBe('urn:user-records:problem:not-found');
  const page = await client.GET('/api/users', { params: { query: { per_page: 5, sort: '-last_name' } } });
  if (page.status !== 200) throw new Error(`expected 200, got ${page.status}`);
  expect(page.headers).toEqual({ 'X-Total-Count': page.data.total, 'X-Total-Count-Relation': 'eq', Link: page.response.headers.get('link') });
  expect(typeof page.headers['X-Total-Count']).toBe('number');
});

test("a refused write says in seconds when to try again: retryAfter, on the outcome and on a helper's problem", () =>
  withTestServer({ env: { RATE_LIMIT_WRITES_PER_MINUTE: '1' } }, async (server) => {
    const client = createUserRecordsClient({ baseUrl: server.url });
    const body = { firstName: 'Rate', lastName: 'Limited', email: 'rate@example.com' };
    expect((await client.POST('/users', { body })).status).toBe(201);
    const refused = await client.POST('/users', { body });
    expect(refused.status).toBe(429);
    if (refused.status !== 429) return;
    expect(refused.retryAfter).toBe(Number(refused.response.headers.get('retry-after')));
    expect(refused.retryAfter).toBeGreaterThan(0);
    expect(refused.headers['Retry-After']).toBe(refused.retryAfter);
    expect(refused.error.type).toBe('urn:user-records:problem:too-many-writes');
    const failing = changeUser(client, '/users/{id}', 2, () => ({ lastName: 'Later' }));
    await expect(failing).rejects.toMatchObject({ name: 'UserRecordsProblem', response: { status: 429 }, retryAfter: expect.any(Number) });
  }));

test('PATCH sends a merge patch, typed from the contract, as JSON or as application/merge-patch+json', async () => {
  const client = createUserRecordsClient({ baseUrl: sut.server.url });
  const created = await client.POST('/users', { body: { firstName: 'Grace', lastName: 'Murray', email: 'grace.patch@example.com' } });
  const id = created.data!.id;
  const json = await client.PATCH('/users/{id}', { params: { path: { id } }, body: { lastName: 'Hopper' } });
  expect(json.data).toEqual({ id, firstName: 'Grace', lastName: 'Hopper', email: 'grace.patch@example.com' });
  const merge = await client.PATCH('/api/users/{id}', {
    params: { path: { id }, header: { 'If-Match': json.response.headers.get('etag')! } },
    body: { email: 'grace.hopper@example.com' },
    headers: { 'Content-Type': 'application/merge-patch+json' },
  });
  expect(merge.response.status).toBe(200);
  expect(merge.data).toMatchObject({ id, name: 'Grace Hopper', email: 'grace.hopper@example.com' });
});

test('a wrong password is an error value with the 401 problem', async () => {
  const client = createUserRecordsClient({ baseUrl: sut.server.url, credentials: { username: TEST_CREDENTIALS.username, password: 'nope' } });
  const { error, response } = await client.GET('/protected-resource', { parseAs: 'text' });
  expect(response.status).toBe(401);
  expect(error).toMatchObject({ status: 401, title: 'Unauthorized' });
});

test('UTF-8 credentials are encoded as RFC 7617 says', () =>
  withTestServer({ env: { BASIC_AUTH_USERNAME: 'zoë', BASIC_AUTH_PASSWORD: 'pässwörd ✓' } }, async (server) => {
    const client = createUserRecordsClient({ baseUrl: server.url, credentials: { username: 'zoë', password: 'pässwörd ✓' } });
    const { data } = await client.GET('/protected-resource', { parseAs: 'text' });
    expect(data).toBe('Hello, zoë. You are authenticated.');
  }));

test('a base path is part of baseUrl', () =>
  withTestServer({ env: { BASE_PATH: '/v1' } }, async (server) => {
    const client = createUserRecordsClient({ baseUrl: server.url });
    const { data } = await client.GET('/users/{id}', { params: { path: { id: 1 } } });
    expect(data?.id).toBe(1);
  }));

test('a user name with a colon is refused at creation', () => {
  expect(() => createUserRecordsClient({ baseUrl: sut.server.url, credentials: { username: 'a:b', password: 'x' } })).toThrow(TypeError);
});

test('network failures throw', async () => {
  const client = createUserRecordsClient({ baseUrl: `http://127.0.0.1:${await freePort()}` });
  await expect(client.GET('/users')).rejects.toThrow();
});

test("pages() follows Link next to the end, in either shape, and throws a list's problem", () =>
  withTestServer({}, async (server) => {
    const client = createUserRecordsClient({ baseUrl: server.url });
    const sizes = async <P extends ListPath>(path: P, query: ListQuery<P>) => {
      const seen: number[][] = [];
      for await (const { items, response } of pages(client, path, query)) {
        expect(response.status).toBe(200);
        seen.push(items.map((user) => user.id));
      }
      return seen;
    };
    expect(await sizes('/users', { limit: 5 })).toEqual([
      [1, 2, 3, 4, 5],
      [6, 7, 8, 9, 10],
      [11, 12],
    ]);
    expect(await sizes('/api/users', { per_page: 5 })).toEqual([
      [1, 2, 3, 4, 5],
      [6, 7, 8, 9, 10],
      [11, 12],
    ]);
    expect(await sizes('/users', {})).toEqual([[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]]);
    const failing = pages(client, '/api/users', { per_page: 101 });
    await expect(failing.next()).rejects.toMatchObject({
      name: 'UserRecordsProblem',
      response: { status: 400 },
      problem: { type: 'urn:user-records:problem:invalid-parameter' },
    });
  }));

test("the sort fields the client types name are those of each list's pattern in the contract", () => {
  const contract = loadContract();
  for (const [path, operationId] of [
    ['/api/users', 'listDemoUsers'],
    ['/users', 'listUsers'],
  ] as const) {
    const sort = contract.operation(operationId).parameters.find((parameter) => parameter.name === 'sort')!;
    const fields = sortFields[path].join('|');
    expect(sort.schema.pattern).toBe(`^-?(${fields})(,-?(${fields}))*$`);
  }
});
