import { DEMO_USERS } from '../../server/db/demo-data.js';
import { buildDemoUserInput } from '../support/builders.js';
import { storedCount, storedUser } from '../support/stored.js';
import { useTestServer } from '../support/test-server.js';
import { describeEachDialect } from '../support/test-store.js';

// Shape A, the "hosted demo" dialect under /api, through real HTTP against a real SQLite file.

describeEachDialect((dialect) => {
  const sut = useTestServer({ dialect });

  describe('GET /api/users/{id}', () => {
    test('wraps the user in data, with the split name fields', async () => {
      const res = await sut.api.get('/api/users/2');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.body).toEqual({
        data: { id: 2, email: DEMO_USERS[1]!.email, first_name: DEMO_USERS[1]!.firstName, last_name: DEMO_USERS[1]!.lastName },
      });
    });

    test('404 problem for an id no user has', async () => {
      const res = await sut.api.get('/api/users/999999');
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.body).toMatchObject({ status: 404, title: 'Not Found', detail: 'No user has id 999999.', instance: '/api/users/999999' });
    });

    test.each(['abc', '0', '-1', '1.5', '1e3', '2147483648', '99999999999999999999', '%20'])('400 for the id %s', async (id) => {
      const res = await sut.api.get(`/api/users/${id}`);
      expect(res.status).toBe(400);
      expect(res.body.type).toBe('urn:user-records:problem:invalid-parameter');
      expect(res.body.errors[0].path).toBe('/id');
    });
  });

  describe('GET /api/users', () => {
    test('first page of 6 by default, ordered by id, with totals', async () => {
      const total = await storedCount(sut.server);
      const res = await sut.api.get('/api/users');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ page: 1, per_page: 6, total, total_pages: Math.ceil(total / 6) });
      expect(res.body.data.map((u: { id: number }) => u.id)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(res.body.data[0]).toEqual({ id: 1, email: DEMO_USERS[0]!.email, first_name: 'Mira', last_name: 'Castellan' });
    });

    test('page and per_page select the slice', async () => {
      const res = await sut.api.get('/api/users?page=3&per_page=4');
      expect(res.status).toBe(200);
      expect(res.body.page).toBe(3);
      expect(res.body.per_page).toBe(4);
      expect(res.body.data.map((u: { id: number }) => u.id)).toEqual([9, 10, 11, 12]);
    });

    test('a page past the last one is empty, with the real totals', async () => {
      const total = await storedCount(sut.server);
      const res = await sut.api.get('/api/users?page=100&per_page=100');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ page: 100, per_page: 100, total, total_pages: Math.ceil(total / 100), data: [] });
      // Its previous page is the last one, by number while numbers reach it.
      expect(res.headers.get('link')).toContain(`</api/users?page=${Math.ceil(total / 100)}&per_page=100>; rel="prev"`);
    });

    test('pages by number reach the first 10,000 users; a deeper one is a 400 that points to the links', async () => {
      for (const [page, perPage] of [
        [1667, 6],
        [101, 100],
        [10001, 1],
        [1000000, 100],
      ]) {
        const res = await sut.api.get(`/api/users?page=${page}&per_page=${perPage}&sort=first_name,last_name`);
        expect(res.status).toBe(400);
        expect(res.body.type).toBe('urn:user-records:problem:invalid-parameter');
        expect(res.body.errors).toEqual([{ path: '/page', message: expect.stringContaining('following the links next and last') }]);
      }
      for (const [page, perPage] of [
        [1666, 6],
        [100, 100],
        [10000, 1],
      ]) {
        expect((await sut.api.get(`/api/users?page=${page}&per_page=${perPage}&sort=first_name,last_name`)).status).toBe(200);
      }
    });

    test('an empty page or per_page (reqres.in reads page 1) is a 400 that says it is empty', async () => {
      for (const name of ['page', 'per_page']) {
        const res = await sut.api.get(`/api/users?${name}=`);
        expect(res.status).toBe(400);
        expect(res.body.errors).toEqual([{ path: `/${name}`, message: 'is empty: give a number, or leave the parameter out' }]);
      }
      // A value that is there but wrong keeps the schema's own words.
      expect((await sut.api.get('/api/users?page=x')).body.errors).toEqual([{ path: '/page', message: 'must be integer' }]);
    });

    test('unknown query parameters are ignored', async () => {
      const res = await sut.api.get('/api/users?per_page=2&cacheBust=123');
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(2);
    });

    test.each([
      ['per_page=0', '/per_page'],
      ['per_page=101', '/per_page'],
      ['per_page=abc', '/per_page'],
      ['page=0', '/page'],
      ['page=1.5', '/page'],
      ['page=-2', '/page'],
      ['page=1&page=2', '/page'],
    ])('400 for %s', async (query, path) => {
      const res = await sut.api.get(`/api/users?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([expect.objectContaining({ path })]);
    });
  });

  describe('POST /api/users', () => {
    test('201 echoes name and email exactly, assigns an id, and stores the split name', async () => {
      const input = buildDemoUserInput({ name: '  Thomas   A. Anderson ' });
      const res = await sut.api.post('/api/users', input);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ id: expect.any(Number), name: input.name, email: input.email, createdAt: expect.any(String) });
      expect(res.headers.get('location')).toBe(`/api/users/${res.body.id}`);
      expect(Date.parse(res.body.createdAt)).toBeGreaterThan(Date.now() - 60_000);
      const row = await storedUser(sut.server, res.body.id);
      expect(row).toMatchObject({ first_name: 'Thomas', last_name: 'A. Anderson', email: input.email, version: 1 });
      const shown = await sut.api.get(`/api/users/${res.body.id}`);
      expect(shown.body.data).toEqual({ id: res.body.id, email: input.email, first_name: 'Thomas', last_name: 'A. Anderson' });
    });

    test('a single word becomes the first name, with an empty last name', async () => {
      const res = await sut.api.post('/api/users', buildDemoUserInput({ name: 'Cher' }));
      expect(res.status).toBe(201);
      expect(await storedUser(sut.server, res.body.id)).toMatchObject({ first_name: 'Cher', last_name: '' });
    });

    test("reqres.in's body, {name, job}, is a 422 that names what is kept instead, and stores nothing", async () => {
      const before = await storedCount(sut.server);
      const job = "is not kept here (reqres.in echoes it back, this service stores a user's name and email only)";
      const created = await sut.api.post('/api/users', { name: 'morpheus', job: 'leader' });
      expect(created.status).toBe(422);
      expect(created.body.errors).toEqual(
        expect.arrayContaining([
          { path: '/job', message: job },
          { path: '/email', message: 'is required' },
        ]),
      );
      const replaced = await sut.api.put('/api/users/2', { name: 'morpheus', job: 'zion resident', email: 'morpheus@example.com' });
      expect(replaced.body.errors).toEqual([{ path: '/job', message: job }]);
      const patched = await sut.api.request('PATCH', '/api/users/2', { json: { job: 'zion resident' } });
      expect(patched.body.errors).toEqual([{ path: '/job', message: job }]);
      // Any other unknown member is simply not allowed.
      expect((await sut.api.post('/api/users', { name: 'A B', email: 'a@example.com', role: 'x' })).body.errors).toEqual([
        { path: '/role', message: 'is not allowed' },
      ]);
      expect(await storedCount(sut.server)).toBe(before);
    });

    test('accepts custom request headers and ignores them', async () => {
      const res = await sut.api.post('/api/users', buildDemoUserInput(), { headers: { 'x-custom-header': 'anything', 'Custom-Header': 'x' } });
      expect(res.status).toBe(201);
      expect(res.headers.get('set-cookie')).toBeNull();
    });

    test.each([
      ['missing name', { email: 'a@example.com' }, '/name', 'is required'],
      ['missing email', { name: 'A B' }, '/email', 'is required'],
      ['unknown member', { name: 'A B', email: 'a@example.com', age: 3 }, '/age', 'is not allowed'],
      [
        'bad e-mail',
        { name: 'A B', email: 'not-an-email' },
        '/email',
        'must be an e-mail address such as ann@example.com (a domain with a dot; no quotes or IP addresses)',
      ],
      ['blank name', { name: '   ', email: 'a@example.com' }, '/name', 'must contain a character other than white space, and no control characters'],
      ['empty name', { name: '', email: 'a@example.com' }, '/name', 'must NOT have fewer than 1 characters'],
      ['name too long', { name: 'x'.repeat(201), email: 'a@example.com' }, '/name', 'must NOT have more than 200 characters'],
      ['number as name', { name: 42, email: 'a@example.com' }, '/name', 'must be string'],
      ['array body', [], '', 'must be object'],
    ])('422 for %s, and nothing is stored', async (_case, body, path, message) => {
      const before = await storedCount(sut.server);
      const res = await sut.api.post('/api/users', body);
      expect(res.status).toBe(422);
      expect(res.body.type).toBe('urn:user-records:problem:validation-failed');
      expect(res.body.errors).toContainEqual({ path, message });
      expect(await storedCount(sut.server)).toBe(before);
    });
  });

  describe('PUT /api/users/{id}', () => {
    test('200 echoes the submitted name and email; the store holds the split name and a new version', async () => {
      const created = await sut.api.post('/api/users', buildDemoUserInput());
      const input = buildDemoUserInput({ name: 'Trinity Moss' });
      const res = await sut.api.put(`/api/users/${created.body.id}`, input);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: created.body.id, name: 'Trinity Moss', email: input.email, updatedAt: expect.any(String) });
      const row = await storedUser(sut.server, created.body.id);
      expect(row).toMatchObject({ first_name: 'Trinity', last_name: 'Moss', email: input.email, version: 2 });
      expect(row!.updated_at >= row!.created_at).toBe(true);
      expect(row!.created_at).toBe(created.body.createdAt);
    });

    test('404 for an unknown id, and nothing is created', async () => {
      const before = await storedCount(sut.server);
      const res = await sut.api.put('/api/users/999999', buildDemoUserInput());
      expect(res.status).toBe(404);
      expect(await storedCount(sut.server)).toBe(before);
    });

    test('422 leaves the stored user untouched', async () => {
      const created = await sut.api.post('/api/users', buildDemoUserInput());
      const before = await storedUser(sut.server, created.body.id);
      const res = await sut.api.put(`/api/users/${created.body.id}`, { name: 'Only Name' });
      expect(res.status).toBe(422);
      expect(await storedUser(sut.server, created.body.id)).toEqual(before);
    });
  });

  describe('DELETE /api/users/{id}', () => {
    test('204 with an empty body; the user is gone from the store and from GET', async () => {
      const created = await sut.api.post('/api/users', buildDemoUserInput());
      const res = await sut.api.delete(`/api/users/${created.body.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(await storedUser(sut.server, created.body.id)).toBeUndefined();
      expect((await sut.api.get(`/api/users/${created.body.id}`)).status).toBe(404);
      expect((await sut.api.delete(`/api/users/${created.body.id}`)).status).toBe(404);
    });
  });
});
