import { DEMO_USERS } from '../../server/db/demo-data.js';
import { buildDemoUserInput, buildUserInput } from '../support/builders.js';
import { storedCount, storedUser } from '../support/stored.js';
import { useTestServer } from '../support/test-server.js';
import { describeEachDialect } from '../support/test-store.js';

// Shape B, the "local" dialect without prefix, through real HTTP against a real SQLite file.

describeEachDialect((dialect) => {
  const sut = useTestServer({ dialect });

  describe('GET /users', () => {
    test('the complete list, ordered by id', async () => {
      const created = await sut.api.post('/users', buildUserInput());
      const res = await sut.api.get('/users');
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(await storedCount(sut.server));
      expect(res.body.map((u: { id: number }) => u.id)).toEqual([...res.body.map((u: { id: number }) => u.id)].sort((a, b) => a - b));
      expect(res.body[0]).toEqual({ id: 1, ...DEMO_USERS[0] });
      expect(res.body.at(-1)).toEqual(created.body);
    });
  });

  describe('GET /users/{id}', () => {
    test('the user, flat', async () => {
      const res = await sut.api.get('/users/2');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: 2, ...DEMO_USERS[1] });
    });

    test('404 for an id no user has', async () => {
      const res = await sut.api.get('/users/424242');
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ type: 'urn:user-records:problem:not-found', status: 404, instance: '/users/424242' });
    });

    test('400 for an id that is not a positive integer', async () => {
      const res = await sut.api.get('/users/abc');
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([{ path: '/id', message: 'must be integer' }]);
    });
  });

  describe('POST /users', () => {
    test('201 with the created user and its Location; stored as sent', async () => {
      const input = buildUserInput({ lastName: '' });
      const res = await sut.api.post('/users', input);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ id: expect.any(Number), ...input });
      expect(res.headers.get('location')).toBe(`/users/${res.body.id}`);
      expect(await storedUser(sut.server, res.body.id)).toMatchObject({ first_name: input.firstName, last_name: '', email: input.email, version: 1 });
    });

    test('the same e-mail address may be used again', async () => {
      const input = buildUserInput();
      const first = await sut.api.post('/users', input);
      const second = await sut.api.post('/users', input);
      expect(second.status).toBe(201);
      expect(second.body.id).toBeGreaterThan(first.body.id);
    });

    test('ids are never reused after a delete', async () => {
      const first = await sut.api.post('/users', buildUserInput());
      await sut.api.delete(`/users/${first.body.id}`);
      const second = await sut.api.post('/users', buildUserInput());
      expect(second.body.id).toBeGreaterThan(first.body.id);
    });

    test.each([
      ['missing firstName', { lastName: 'L', email: 'a@example.com' }, '/firstName', 'is required'],
      ['missing lastName', { firstName: 'F', email: 'a@example.com' }, '/lastName', 'is required'],
      ['shape A body', { name: 'A B', email: 'a@example.com' }, '/name', 'is not allowed'],
      [
        'bad e-mail',
        { firstName: 'F', lastName: 'L', email: 'a@' },
        '/email',
        'must be an e-mail address such as ann@example.com (a domain with a dot; no quotes or IP addresses)',
      ],
      ['e-mail too long', { firstName: 'F', lastName: 'L', email: `${'a'.repeat(250)}@example.com` }, '/email', 'must NOT have more than 254 characters'],
      [
        'blank firstName',
        { firstName: ' \t', lastName: 'L', email: 'a@example.com' },
        '/firstName',
        'must contain a character other than white space, and no control characters',
      ],
      ['null lastName', { firstName: 'F', lastName: null, email: 'a@example.com' }, '/lastName', 'must be string'],
      ['string body', 'hello', '', 'must be object'],
    ])('422 for %s, and nothing is stored', async (_case, body, path, message) => {
      const before = await storedCount(sut.server);
      const res = await sut.api.post('/users', body);
      expect(res.status).toBe(422);
      expect(res.body.errors).toContainEqual({ path, message });
      expect(await storedCount(sut.server)).toBe(before);
    });
  });

  describe('PUT /users/{id}', () => {
    test('200 with the replaced user; the store holds it with the next version', async () => {
      const created = await sut.api.post('/users', buildUserInput());
      const input = buildUserInput({ firstName: 'Renamed' });
      const res = await sut.api.put(`/users/${created.body.id}`, input);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: created.body.id, ...input });
      expect(await storedUser(sut.server, created.body.id)).toMatchObject({ first_name: 'Renamed', last_name: input.lastName, email: input.email, version: 2 });
    });

    test('404 for an unknown id', async () => {
      expect((await sut.api.put('/users/999999', buildUserInput())).status).toBe(404);
    });
  });

  describe('DELETE /users/{id}', () => {
    test('204 with an empty body, and the user is gone', async () => {
      const created = await sut.api.post('/users', buildUserInput());
      const res = await sut.api.delete(`/users/${created.body.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(await storedUser(sut.server, created.body.id)).toBeUndefined();
    });

    test('404 for an unknown id', async () => {
      expect((await sut.api.delete('/users/999999')).status).toBe(404);
    });
  });

  describe('one store behind both shapes', () => {
    test('a user created in shape A is read, replaced and deleted in shape B', async () => {
      const created = await sut.api.post('/api/users', buildDemoUserInput({ name: 'Ada Shape' }));
      const id = created.body.id;
      expect((await sut.api.get(`/users/${id}`)).body).toEqual({ id, firstName: 'Ada', lastName: 'Shape', email: created.body.email });
      const replaced = await sut.api.put(`/users/${id}`, buildUserInput({ firstName: 'Bea', lastName: 'Local' }));
      expect((await sut.api.get(`/api/users/${id}`)).body.data).toEqual({ id, email: replaced.body.email, first_name: 'Bea', last_name: 'Local' });
      expect((await sut.api.delete(`/users/${id}`)).status).toBe(204);
      expect((await sut.api.get(`/api/users/${id}`)).status).toBe(404);
    });
  });
});
