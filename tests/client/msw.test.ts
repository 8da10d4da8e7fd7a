import { setupServer } from 'msw/node';
import { createMockHandlers } from '../../client/src/msw.js';
import { DEMO_USERS } from '../../server/db/demo-data.js';
import { collectExamples, contract, exampleLabel, exampleRequest, inSandbox, requestsOf } from '../support/contract-examples.js';
import { SANDBOX_RESET } from '../support/sandbox-reset.js';
import { TEST_CREDENTIALS } from '../support/test-server.js';

// The MSW handlers of the client package (`@user-records/client/msw`) in Node, through real fetch calls that
// msw/node intercepts: they answer every example of the contract as a fresh server does, reset to the demo
// data, and honour the sandbox's `delay` and `Prefer`.

const baseUrl = 'http://user-records.test';
const handlers = createMockHandlers({ baseUrl, credentials: { username: 'admin', password: TEST_CREDENTIALS.password } });
const mocks = setupServer(...handlers);
beforeAll(() => mocks.listen({ onUnhandledRequest: 'error' }));
afterEach(() => handlers.reset());
afterAll(() => mocks.close());

const demoList = DEMO_USERS.map((user, i) => ({ id: i + 1, ...user }));
const json = async (path: string, init?: RequestInit) => {
  const response = await fetch(`${baseUrl}${path}`, init);
  const text = await response.text();
  return { response, body: text === '' ? undefined : JSON.parse(text) };
};

// What the MSW handlers serve: every operation but the operators' (health, readiness, metrics).
const served = collectExamples().filter((example) => {
  if (example.request === undefined || example.status === 'request') return false;
  const [method, path] = example.where.split(' ') as [string, string];
  const operation = (contract.document.paths as any)[path][method.toLowerCase()];
  return !operation.tags.includes('operations');
});

test("the handlers serve some examples of each tag but the operators'", () => {
  expect(served.length).toBeGreaterThan(50);
});

// The MSW handlers answer as a sandbox does: a reset's examples on a server that is not one (404) are not theirs.
test.each(
  served.filter((example) => example.where !== 'POST /__sandbox/reset' || inSandbox(example)).map((example) => [exampleLabel(example), example] as const),
)('%s is what the MSW handlers answer', async (_label, example) => {
  let response!: Response;
  for (const request of requestsOf(example)) response = await fetch(exampleRequest(baseUrl, request));
  expect(String(response.status)).toBe(example.status);
  expect(response.headers.get('content-type')).toBe(example.mediaType);
  if (example.mediaType.startsWith('text/plain')) return expect(await response.text()).toBe(example.value);
  const body = await response.json();
  for (const stamp of ['createdAt', 'updatedAt'])
    if (typeof body[stamp] === 'string' && !Number.isNaN(Date.parse(body[stamp]))) body[stamp] = (example.value as Record<string, unknown>)[stamp];
  expect(body).toEqual(example.value);
});

test('reset() restores the demo data: users, ids from 1 again, idempotency keys forgotten', async () => {
  const headers = { 'content-type': 'application/json', 'Idempotency-Key': 'msw-reset' };
  const input = JSON.stringify({ firstName: 'Ada', lastName: 'Quill', email: 'ada@example.com' });
  const created = await json('/users', { method: 'POST', headers, body: input });
  expect(created.body.id).toBe(13);
  await json('/users/3', { method: 'DELETE' });
  await json('/users/2', { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"lastName":"Changed"}' });
  expect((await json('/users')).body).not.toEqual(demoList);

  handlers.reset();
  expect((await json('/users')).body).toEqual(demoList);
  expect((await fetch(`${baseUrl}/users/2`)).headers.get('etag')).toBe('"1"');
  const again = await json('/users', { method: 'POST', headers, body: input });
  expect(again.response.headers.get('idempotent-replayed')).toBeNull();
  expect(again.body).toEqual(created.body);
});

test('POST /__sandbox/reset resets too, as on the sandbox: code switches between them by base URL', async () => {
  await json('/users/1', { method: 'DELETE' });
  expect((await fetch(`${baseUrl}/__sandbox/reset`, SANDBOX_RESET)).status).toBe(204);
  expect((await json('/users')).body).toEqual(demoList);
});

test('each createMockHandlers has a store of its own', async () => {
  const other = createMockHandlers({ baseUrl: 'http://other.test' });
  mocks.use(...other);
  await fetch('http://other.test/users/1', { method: 'DELETE' });
  expect((await json('/users')).body).toHaveLength(12);
  expect(await (await fetch('http://other.test/users')).json()).toHaveLength(11);
  mocks.resetHandlers();
});

test('users: the store starts with them instead of the demo users, and reset() restores them', async () => {
  const team = [
    { firstName: 'Grace', lastName: 'Hopper', email: 'grace@navy.example' },
    { firstName: 'Alan', lastName: 'Turing', email: 'alan@bletchley.example' },
  ];
  const own = createMockHandlers({ baseUrl: 'http://own.test', users: team });
  mocks.use(...own);
  const list = async () => (await fetch('http://own.test/users')).json();
  expect(await list()).toEqual(team.map((user, i) => ({ id: i + 1, ...user })));
  await fetch('http://own.test/users/1', { method: 'DELETE' });
  own.reset();
  expect(await list()).toEqual(team.map((user, i) => ({ id: i + 1, ...user })));
  mocks.resetHandlers();
});

test("users that break the contract throw, naming each wrong user and field, as the server's USERS_FILE does", () => {
  // As JSON gives them: typed any, so the compiler does not refuse them first.
  const users = JSON.parse('[{ "firstName": "Grace", "lastName": "Hopper", "email": "grace" }, { "name": "Alan Turing" }]');
  expect(() => createMockHandlers({ baseUrl, users })).toThrow(
    /^createMockHandlers: users does not match the contract's UserInput: user 1: \/email must be an e-mail address .*; user 2: \/firstName is required; user 2: \/lastName is required; user 2: \/email is required; user 2: \/name is not allowed\.$/,
  );
});

test('a base URL with a path serves the operations under it, with links and Location under it too', async () => {
  const mounted = createMockHandlers({ baseUrl: 'http://app.test/mock/v1' });
  mocks.use(...mounted);
  const created = await fetch('http://app.test/mock/v1/users', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"firstName":"A","lastName":"B","email":"a@example.com"}',
  });
  expect(created.headers.get('location')).toBe('/mock/v1/users/13');
  const page = await fetch('http://app.test/mock/v1/users?limit=5');
  expect(page.headers.get('link')).toMatch(/^<\/mock\/v1\/users\?limit=5&cursor=/);
  mocks.resetHandlers();
});

test('delay holds the answer back; out of range it is a 400 at once', async () => {
  const started = performance.now();
  expect((await fetch(`${baseUrl}/users/2?delay=0.5`)).status).toBe(200);
  expect(performance.now() - started).toBeGreaterThanOrEqual(490);
  const heldProblem = performance.now();
  expect((await fetch(`${baseUrl}/users/999?delay=0.5`)).status).toBe(404);
  expect(performance.now() - heldProblem).toBeGreaterThanOrEqual(490);
  const refused = await json('/users/2?delay=11');
  expect(refused.response.status).toBe(400);
  expect(refused.body.errors).toEqual([{ path: '/delay', message: 'must be <= 10' }]);
});

test('latency holds every answer back, from a number or a range; a bad one throws at once', async () => {
  mocks.use(...createMockHandlers({ baseUrl: 'http://slow.test', latency: [300, 400] }));
  const started = performance.now();
  expect((await fetch('http://slow.test/users/2')).status).toBe(200);
  expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  mocks.resetHandlers();
  for (const latency of [-1, 1.5, [500, 100], 600_001] as const) {
    expect(() => createMockHandlers({ baseUrl, latency: latency as number })).toThrow(/^createMockHandlers: latency must be milliseconds from 0 to 600000/);
  }
});

test('Prefer answers the contract example without running the operation', async () => {
  const missing = await json('/users/2', { headers: { Prefer: 'code=404' } });
  expect(missing.response.status).toBe(404);
  expect(missing.response.headers.get('preference-applied')).toBe('code=404, example=notFound');
  expect(missing.body).toMatchObject({ detail: 'No user has id 999.' });
  const created = await json('/users', { method: 'POST', headers: { Prefer: 'code=201', 'content-type': 'application/json' }, body: '{}' });
  expect(created.response.status).toBe(201);
  expect((await json('/users')).body).toHaveLength(12);
});

test('a compressed body is refused as the server refuses it; a GET with Content-Encoding is served', async () => {
  const body = JSON.stringify({ firstName: 'Ann', lastName: 'Lee', email: 'ann@example.com' });
  const compressed = await json('/users', { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body });
  expect(compressed.response.status).toBe(415);
  expect(compressed.body.detail).toBe('Content-Encoding gzip is not supported; send the body uncompressed.');
  expect((await fetch(`${baseUrl}/users/2`, { headers: { 'content-encoding': 'gzip' } })).status).toBe(200);
});

test('a path the contract does not have is passed on, so that a page on the same origin loads its files', async () => {
  const passed = createMockHandlers({ baseUrl: 'http://page.test' });
  const seen: string[] = [];
  mocks.use(...passed);
  mocks.events.on('request:unhandled', ({ request }) => void seen.push(new URL(request.url).pathname));
  await fetch('http://page.test/assets/app.js').catch(() => undefined);
  expect(seen).toContain('/assets/app.js');
  mocks.events.removeAllListeners();
  mocks.resetHandlers();
});
