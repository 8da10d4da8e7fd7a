import { createSandboxClient, type BasicCredentials, type LocalSort, type SandboxClientPaths, type UserRecordsClient } from '../../client/src/index.js';
import { DEMO_USERS } from '../../server/db/demo-data.js';
import { contractCheckingFetch } from '../support/checking-fetch.js';

// How a client uses the service, written once with the typed client and run against every target: the real
// server, the Prism mock, the real server behind `prism proxy --errors`, the sandbox, and the MSW handlers of
// the client package. Every response
// also passes through contractCheckingFetch. A stateless mock cannot remember or echo, so assertions
// about state are made only where the target is stateful.

/** Which kind of target: the real server, the Prism mock, the real server behind the Prism proxy, the sandbox (`make sandbox`), or the MSW handlers. */
export type TargetKind = 'server' | 'mock' | 'proxy' | 'sandbox' | 'msw';

/** Where a target listens, known once the suite's beforeAll has started it. */
export interface ScenarioTarget {
  readonly baseUrl: string;
  /** Credentials the target accepts for the protected resource. */
  readonly credentials: BasicCredentials;
}
const PROBLEM_JSON = 'application/problem+json';

/** The demo user with this id, as shape B shows it (the contract's examples show the same people). */
const demoUser = (id: number) => ({ id, ...DEMO_USERS[id - 1]! });

/** Registers every scenario against the target of this kind that `target()` returns once beforeAll ran. */
export function describeScenarios(kind: TargetKind, target: () => ScenarioTarget): void {
  const stateful = kind !== 'mock';
  // Typed with the sandbox's controls (the variant with `Prefer`), which the scenarios send to the mock alone.
  let client: UserRecordsClient<SandboxClientPaths>;
  let anonymous: UserRecordsClient<SandboxClientPaths>;
  let check: (request: Request) => Promise<Response>;
  beforeAll(() => {
    const { baseUrl, credentials } = target();
    check = contractCheckingFetch(baseUrl);
    client = createSandboxClient({ baseUrl, credentials, fetch: check });
    anonymous = createSandboxClient({ baseUrl, fetch: check });
  });
  const only = (kinds: TargetKind[]) => (kinds.includes(kind) ? test : test.skip);
  // Mocks answer errors on request; real targets produce them from state.
  const notFoundHeaders = () => (stateful ? {} : { Prefer: 'code=404' });

  describe('shape A (/api)', () => {
    test('reads a demo user, wrapped in data', async () => {
      const { data, response } = await client.GET('/api/users/{id}', { params: { path: { id: 2 } } });
      expect(response.status).toBe(200);
      const { id, firstName, lastName, email } = demoUser(2);
      expect(data).toEqual({ data: { id, email, first_name: firstName, last_name: lastName } });
    });

    test('lists a page of users with its counters', async () => {
      const { data, response } = await client.GET('/api/users', { params: { query: { page: 1, per_page: 6 } } });
      expect(response.status).toBe(200);
      expect(data).toMatchObject({ page: 1, per_page: 6 });
      expect(data!.data.length).toBeLessThanOrEqual(6);
      expect(data!.data[0]?.id).toBe(1);
      expect(data!.total_pages).toBe(Math.ceil(data!.total / 6));
    });

    test('filters and sorts a page, with Link relations to the others', async () => {
      const { data, response } = await client.GET('/api/users', { params: { query: { q: 'a', sort: '-last_name', per_page: 2 } } });
      expect(response.status).toBe(200);
      expect(response.headers.get('link')).toMatch(/rel="first"/);
      if (!stateful) return;
      const expected = DEMO_USERS.map((user, i) => ({ id: i + 1, ...user }))
        .filter((user) => [user.firstName, user.lastName, user.email].some((text) => text.toLowerCase().includes('a')))
        .sort((x, y) => (x.lastName.toLowerCase() < y.lastName.toLowerCase() ? 1 : -1));
      expect(data!.total).toBe(expected.length);
      expect(data!.data.map((user) => user.id)).toEqual(expected.slice(0, 2).map((user) => user.id));
      const next = /<([^>]*)>; rel="next"/.exec(response.headers.get('link')!)![1]!;
      const cursor = new URL(next, 'http://x').searchParams.get('cursor')!;
      const second = await client.GET('/api/users', { params: { query: { q: 'a', sort: '-last_name', per_page: 2, page: 2, cursor } } });
      expect(second.data!.data.map((user) => user.id)).toEqual(expected.slice(2, 4).map((user) => user.id));
    });

    test('creates, reads, replaces and deletes a user', async () => {
      const input = { name: 'Thomas Anderson', email: 'thomas.anderson@example.com' };
      const created = await client.POST('/api/users', { body: input });
      expect(created.response.status).toBe(201);
      expect(created.data).toEqual({ id: expect.any(Number), name: input.name, email: input.email, createdAt: expect.any(String) });
      expect(created.response.headers.get('location')).toMatch(/\/api\/users\/\d+$/);
      const id = stateful ? created.data!.id : 2;

      if (stateful) {
        const read = await client.GET('/api/users/{id}', { params: { path: { id } } });
        expect(read.data!.data).toEqual({ id, email: input.email, first_name: 'Thomas', last_name: 'Anderson' });
      }
      const replacement = { name: 'Neo  Anderson', email: 'neo@example.com' };
      const replaced = await client.PUT('/api/users/{id}', { params: { path: { id } }, body: replacement });
      expect(replaced.response.status).toBe(200);
      expect(replaced.data).toMatchObject({ id, updatedAt: expect.any(String) });
      if (stateful) expect(replaced.data).toMatchObject(replacement);

      const deleted = await client.DELETE('/api/users/{id}', { params: { path: { id } } });
      expect(deleted.response.status).toBe(204);
      expect(deleted.data).toBeUndefined();
      if (stateful) {
        const gone = await client.GET('/api/users/{id}', { params: { path: { id } } });
        expect(gone.response.status).toBe(404);
      }
    });

    test('changes one field with a merge patch', async () => {
      const { data, response } = await client.PATCH('/api/users/{id}', { params: { path: { id: 4 } }, body: { email: 'ezra.l@example.com' } });
      expect(response.status).toBe(200);
      if (stateful) expect(data).toMatchObject({ id: 4, email: 'ezra.l@example.com' });
    });

    test('revalidates a user it holds: 304 while unchanged (mock: on request)', async () => {
      const first = await client.GET('/api/users/{id}', { params: { path: { id: 3 } } });
      const etag = first.response.headers.get('etag')!;
      const header = { 'If-None-Match': etag, ...(stateful ? {} : { Prefer: 'code=304' }) };
      const { data, response } = await client.GET('/api/users/{id}', { params: { path: { id: 3 }, header } });
      expect(response.status).toBe(304);
      expect(data).toBeUndefined();
    });

    test('an unknown id is a 404 problem', async () => {
      const { error, response } = await client.GET('/api/users/{id}', { params: { path: { id: 999 } }, headers: notFoundHeaders() });
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toBe(PROBLEM_JSON);
      expect(error).toMatchObject({ status: 404, title: 'Not Found', detail: 'No user has id 999.' });
    });

    test('an id below 1 is a 400 problem', async () => {
      const { error, response } = await client.GET('/api/users/{id}', { params: { path: { id: 0 } } });
      expect(response.status).toBe(400);
      expect(error).toMatchObject({ status: 400 });
    });

    test('a page size over 100 is a 400 problem', async () => {
      const { response } = await client.GET('/api/users', { params: { query: { per_page: 101 } } });
      expect(response.status).toBe(400);
    });

    test('a bad e-mail address is a 422 problem listing the member', async () => {
      // A mock answers an invalid request with the example it is asked for (its first one otherwise).
      const headers = stateful ? {} : { Prefer: 'code=422, example=invalidEmail' };
      const { error, response } = await client.POST('/api/users', { body: { name: 'A B', email: 'not-an-email' }, headers });
      expect(response.status).toBe(422);
      expect(error).toMatchObject({ status: 422, type: 'urn:user-records:problem:validation-failed' });
      expect(error!.errors).toContainEqual({
        path: '/email',
        message: 'must be an e-mail address such as ann@example.com (a domain with a dot; no quotes or IP addresses)',
      });
    });

    test('a body that is not JSON is a 415 problem', async () => {
      const { response } = await client.POST('/api/users', {
        body: { name: 'A B', email: 'a@example.com' },
        bodySerializer: () => 'name=A+B&email=a%40example.com',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      });
      expect(response.status).toBe(415);
    });
  });

  describe('shape B (no prefix)', () => {
    test('lists users, demo users first, ordered by id', async () => {
      const { data, response } = await client.GET('/users');
      expect(response.status).toBe(200);
      expect(data!.slice(0, 2)).toEqual([demoUser(1), demoUser(2)]);
      const ids = data!.map((user) => user.id);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
    });

    test('searches, sorts and reads a page at a time, following Link next with the typed cursor', async () => {
      const { data, response } = await client.GET('/users', { params: { query: { q: 'WREN', sort: '-lastName', limit: 1 } } });
      expect(response.status).toBe(200);
      if (!stateful) return expect(Array.isArray(data)).toBe(true);
      expect(data).toEqual([demoUser(2)]);
      expect(response.headers.get('x-total-count')).toBe('1');
      expect(response.headers.get('link')).toBeNull();

      const whole = (await client.GET('/users', { params: { query: { sort: 'email' } } })).data!.map((user) => user.id);
      const walked: number[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.GET('/users', { params: { query: { sort: 'email', limit: 5, ...(cursor ? { cursor } : {}) } } });
        walked.push(...page.data!.map((user) => user.id));
        const next = /<([^>]*)>; rel="next"/.exec(page.response.headers.get('link') ?? '')?.[1];
        cursor = next === undefined ? undefined : new URL(next, 'http://x').searchParams.get('cursor')!;
      } while (cursor !== undefined);
      expect(walked).toEqual(whole);
    });

    test('a sort by a field the shape does not have is a 400 problem', async () => {
      // shape A's name of the field: the client's types refuse it, so it is sent as a client without them would.
      const { error, response } = await client.GET('/users', { params: { query: { sort: 'first_name' as LocalSort } } });
      expect(response.status).toBe(400);
      expect(error).toMatchObject({ status: 400 });
    });

    test('reads a demo user', async () => {
      const { data } = await client.GET('/users/{id}', { params: { path: { id: 2 } } });
      expect(data).toEqual(demoUser(2));
    });

    test('creates, replaces and deletes a user; shape A sees the same record', async () => {
      const input = { firstName: 'Thomas', lastName: 'Anderson', email: 'thomas.anderson@example.com' };
      const created = await client.POST('/users', { body: input });
      expect(created.response.status).toBe(201);
      expect(created.data).toEqual({ id: expect.any(Number), ...input });
      expect(created.response.headers.get('location')).toMatch(/\/users\/\d+$/);
      const id = stateful ? created.data!.id : 2;

      const replacement = { firstName: 'Tobias', lastName: 'J. Wren', email: 'tobias.j.wren@example.com' };
      const replaced = await client.PUT('/users/{id}', { params: { path: { id } }, body: replacement });
      expect(replaced.response.status).toBe(200);
      expect(replaced.data).toEqual({ id, ...replacement });
      if (stateful) {
        const asShapeA = await client.GET('/api/users/{id}', { params: { path: { id } } });
        expect(asShapeA.data!.data).toEqual({ id, email: replacement.email, first_name: 'Tobias', last_name: 'J. Wren' });
      }
      const deleted = await client.DELETE('/users/{id}', { params: { path: { id } } });
      expect(deleted.response.status).toBe(204);
    });

    test('an unknown id is a 404 problem on every operation', async () => {
      const params = { path: { id: 999 } };
      const headers = notFoundHeaders();
      const body = { firstName: 'A', lastName: 'B', email: 'a@example.com' };
      const results = [
        await client.GET('/users/{id}', { params, headers }),
        await client.PUT('/users/{id}', { params, headers, body }),
        await client.DELETE('/users/{id}', { params, headers }),
      ];
      for (const { error, response } of results) {
        expect(response.status).toBe(404);
        expect(error).toMatchObject({ status: 404, instance: '/users/999' });
      }
    });

    test('a shape A body sent to shape B is a 422 problem', async () => {
      const { response } = await client.POST('/users', {
        // @ts-expect-error the typed client refuses this body; the service must refuse it too
        body: { name: 'A B', email: 'a@example.com' },
      });
      expect(response.status).toBe(422);
    });

    only(['server', 'proxy', 'sandbox', 'msw'])('a body over the size limit is a 413 problem', async () => {
      const body = { firstName: 'A', lastName: 'x'.repeat(70_000), email: 'a@example.com' };
      const { error, response } = await client.POST('/users', { body });
      expect(response.status).toBe(413);
      expect(error).toMatchObject({ status: 413 });
    });
  });

  describe('the protected resource', () => {
    test.each(['/protected-resource', '/api/protected-resource'] as const)('%s answers text to the right credentials', async (path) => {
      const { data, response } = await client.GET(path, { parseAs: 'text', headers: { 'Custom-Header': 'demo' } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
      const { username } = target().credentials;
      expect(data).toBe(`Hello, ${stateful ? username : 'admin'}. You are authenticated.`);
    });

    test.each(['/protected-resource', '/api/protected-resource'] as const)('%s challenges a client without credentials', async (path) => {
      const { response } = await anonymous.GET(path, { parseAs: 'text' });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    });

    only(['server', 'proxy', 'sandbox', 'msw'])('a wrong password is a 401 problem with the challenge', async () => {
      const { username } = target().credentials;
      const wrong = createSandboxClient({ baseUrl: target().baseUrl, credentials: { username, password: 'wrong' }, fetch: check });
      const { error, response } = await wrong.GET('/protected-resource', { parseAs: 'text' });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Basic realm="user-records", charset="UTF-8"');
      expect(error).toMatchObject({ status: 401, title: 'Unauthorized' });
    });
  });

  describe('outside the operations', () => {
    // The MSW handlers pass a path the contract does not have on (to MSW's onUnhandledRequest), so that a
    // page on the same origin as the mocked service still loads its own files.
    only(['server', 'mock', 'proxy', 'sandbox'])('an unknown path is a 404 problem', async () => {
      const response = await check(new Request(`${target().baseUrl}/no-such-thing`));
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    });

    test('a method the path lacks is a 405 problem', async () => {
      const response = await check(new Request(`${target().baseUrl}/users`, { method: 'PATCH' }));
      expect(response.status).toBe(405);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    });
  });
}
