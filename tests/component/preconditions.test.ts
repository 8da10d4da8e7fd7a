import { buildDemoUserInput, buildUserInput } from '../support/builders.js';
import { storedUser } from '../support/stored.js';
import { useTestServer } from '../support/test-server.js';
import { describeEachDialect } from '../support/test-store.js';

// Optimistic concurrency (RFC 9110): ETag on single-user responses, If-Match on PUT and DELETE, and
// conditional GET with If-None-Match.

describeEachDialect((dialect) => {
  const sut = useTestServer({ dialect, env: { SEED_DEMO_DATA: 'false' } });
  const newUser = async () => (await sut.api.post('/users', buildUserInput())).body.id as number;

  test('single-user responses carry the strong ETag of the version, in both shapes', async () => {
    const created = await sut.api.post('/users', buildUserInput());
    expect(created.headers.get('etag')).toBe('"1"');
    const id = created.body.id;
    expect((await sut.api.get(`/users/${id}`)).headers.get('etag')).toBe('"1"');
    expect((await sut.api.get(`/api/users/${id}`)).headers.get('etag')).toBe('"1"');
    const replaced = await sut.api.put(`/api/users/${id}`, buildDemoUserInput());
    expect(replaced.headers.get('etag')).toBe('"2"');
    expect((await sut.api.get(`/users/${id}`)).headers.get('etag')).toBe('"2"');
  });

  test.each([
    ['the current tag', '"1"'],
    ['a list holding the current tag', '"7", "1"'],
    ['*', '*'],
  ])('PUT with If-Match %s applies the change', async (_case, ifMatch) => {
    const id = await newUser();
    const res = await sut.api.put(`/users/${id}`, buildUserInput({ firstName: 'Matched' }), { headers: { 'if-match': ifMatch } });
    expect(res.status).toBe(200);
    expect(await storedUser(sut.server, id)).toMatchObject({ first_name: 'Matched', version: 2 });
  });

  test.each([
    ['a stale tag', '"0"'],
    ['a weak tag (If-Match compares strongly)', 'W/"1"'],
    ['a tag that is not ours', '"abc"'],
    ['an empty list, which names no version (RFC 9110 §5.6.1)', ''],
    ['an empty list of white space', ' \t '],
  ])('PUT with If-Match %s is a 412 problem, and the user is untouched', async (_case, ifMatch) => {
    const id = await newUser();
    const before = await storedUser(sut.server, id);
    for (const path of [`/users/${id}`, `/api/users/${id}`]) {
      const body = path.startsWith('/api') ? buildDemoUserInput() : buildUserInput();
      const res = await sut.api.put(path, body, { headers: { 'if-match': ifMatch } });
      expect(res.status).toBe(412);
      expect(res.body).toMatchObject({ type: 'urn:user-records:problem:precondition-failed', status: 412 });
    }
    expect(await storedUser(sut.server, id)).toEqual(before);
  });

  test('DELETE honours If-Match: 412 when stale, 204 when current', async () => {
    const id = await newUser();
    await sut.api.put(`/users/${id}`, buildUserInput());
    expect((await sut.api.delete(`/users/${id}`, { headers: { 'if-match': '"1"' } })).status).toBe(412);
    expect(await storedUser(sut.server, id)).toBeDefined();
    expect((await sut.api.delete(`/api/users/${id}`, { headers: { 'if-match': '"2"' } })).status).toBe(204);
    expect(await storedUser(sut.server, id)).toBeUndefined();
  });

  test('an unknown id is a 404 whatever the precondition', async () => {
    expect((await sut.api.put('/users/999999', buildUserInput(), { headers: { 'if-match': '"1"' } })).status).toBe(404);
    expect((await sut.api.delete('/users/999999', { headers: { 'if-match': '*' } })).status).toBe(404);
  });

  test.each(['1', '"1', 'W/1', '"1",'])('a malformed If-Match %j is a 400 problem', async (ifMatch) => {
    const id = await newUser();
    const res = await sut.api.delete(`/users/${id}`, { headers: { 'if-match': ifMatch } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe('/If-Match');
    expect(await storedUser(sut.server, id)).toBeDefined();
  });

  test('50 concurrent read-modify-write clients lose no update', async () => {
    const id = (await sut.api.post('/users', buildUserInput({ lastName: '0' }))).body.id;
    let conflicts = 0;
    const increment = async () => {
      for (;;) {
        const read = await sut.api.get(`/users/${id}`);
        const next = { ...read.body, lastName: String(Number(read.body.lastName) + 1) };
        delete next.id;
        const write = await sut.api.put(`/users/${id}`, next, { headers: { 'if-match': read.headers.get('etag')! } });
        if (write.status === 200) return;
        expect(write.status).toBe(412);
        conflicts++;
      }
    };
    await Promise.all(Array.from({ length: 50 }, increment));
    expect(await storedUser(sut.server, id)).toMatchObject({ last_name: '50', version: 51 });
    expect(conflicts).toBeGreaterThan(0);
  });

  describe.each([
    ['shape A', '/api/users'],
    ['shape B', '/users'],
  ])('conditional GET, %s', (_shape, base) => {
    test.each([
      ['the current tag', '"1"'],
      ['the current tag, weak (If-None-Match compares weakly)', 'W/"1"'],
      ['a list holding the current tag', '"7",W/"3" , "1"'],
      ['*', '*'],
    ])('If-None-Match with %s is a 304 with the ETag and no body', async (_case, ifNoneMatch) => {
      const id = await newUser();
      const res = await sut.api.get(`${base}/${id}`, { headers: { 'if-none-match': ifNoneMatch } });
      expect(res.status).toBe(304);
      expect(res.headers.get('etag')).toBe('"1"');
      expect(res.text).toBe('');
      expect(res.headers.get('content-type')).toBeNull();
    });

    test.each([
      ['a stale tag', '"0"'],
      ['a tag that is not ours', '"abc"'],
      ['an empty list, which names no copy (RFC 9110 §5.6.1)', ''],
    ])('If-None-Match with %s gets the user, 200', async (_case, ifNoneMatch) => {
      const id = await newUser();
      const res = await sut.api.get(`${base}/${id}`, { headers: { 'if-none-match': ifNoneMatch } });
      expect(res.status).toBe(200);
      expect(res.headers.get('etag')).toBe('"1"');
    });

    test('after a change, the tag the client holds gets the new version, and the new tag a 304', async () => {
      const id = await newUser();
      await sut.api.put(`/users/${id}`, buildUserInput());
      const stale = await sut.api.get(`${base}/${id}`, { headers: { 'if-none-match': '"1"' } });
      expect(stale.status).toBe(200);
      expect(stale.headers.get('etag')).toBe('"2"');
      expect((await sut.api.get(`${base}/${id}`, { headers: { 'if-none-match': '"2"' } })).status).toBe(304);
    });

    test('an unknown id is a 404 whatever If-None-Match says, * included', async () => {
      for (const ifNoneMatch of ['*', '"1"']) {
        expect((await sut.api.get(`${base}/999999`, { headers: { 'if-none-match': ifNoneMatch } })).status).toBe(404);
      }
    });

    test.each(['1', '"1', 'W/1', '"1",'])('a malformed If-None-Match %j is a 400 problem', async (ifNoneMatch) => {
      const id = await newUser();
      const res = await sut.api.get(`${base}/${id}`, { headers: { 'if-none-match': ifNoneMatch } });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([{ path: '/If-None-Match', message: 'must be * or a comma-separated list of entity tags such as "1"' }]);
    });
  });
});
