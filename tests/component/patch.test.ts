import { buildUserInput } from '../support/builders.js';
import { storedUser } from '../support/stored.js';
import { useTestServer } from '../support/test-server.js';
import { describeEachDialect } from '../support/test-store.js';

// PATCH with a JSON Merge Patch (RFC 7396) on both shapes: the members given replace the stored ones, the
// rest stay; If-Match is honoured; concurrent patches of different members lose none of them.

const MERGE_PATCH = 'application/merge-patch+json';

describeEachDialect((dialect) => {
  const sut = useTestServer({ dialect, env: { SEED_DEMO_DATA: 'false' } });
  const newUser = async () =>
    (await sut.api.post('/users', buildUserInput({ firstName: 'Ada', lastName: 'Byron', email: `ada.${Date.now()}.${Math.random()}@example.com` }))).body;
  const patch = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    sut.api.request('PATCH', path, { raw: JSON.stringify(body), headers: { 'content-type': MERGE_PATCH, ...headers } });

  test.each([MERGE_PATCH, 'application/json'])('shape B: a patch sent as %s changes the members it has and keeps the rest', async (contentType) => {
    const user = await newUser();
    const res = await patch(`/users/${user.id}`, { lastName: 'Lovelace' }, { 'content-type': contentType });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: user.id, firstName: 'Ada', lastName: 'Lovelace', email: user.email });
    expect(res.headers.get('etag')).toBe('"2"');
    expect(await storedUser(sut.server, user.id)).toMatchObject({ first_name: 'Ada', last_name: 'Lovelace', email: user.email, version: 2 });
  });

  test('shape A: name is split as on create; the answer shows name and email as sent, or as stored', async () => {
    const user = await newUser();
    const email = await patch(`/api/users/${user.id}`, { email: 'ada.new@example.com' });
    expect(email.status).toBe(200);
    expect(email.body).toEqual({ id: user.id, name: 'Ada Byron', email: 'ada.new@example.com', updatedAt: expect.any(String) });
    const name = await patch(`/api/users/${user.id}`, { name: 'Augusta Ada King' });
    expect(name.body).toMatchObject({ name: 'Augusta Ada King', email: 'ada.new@example.com' });
    expect(name.headers.get('etag')).toBe('"3"');
    expect(await storedUser(sut.server, user.id)).toMatchObject({ first_name: 'Augusta', last_name: 'Ada King', email: 'ada.new@example.com' });
  });

  // A patch that changes nothing must leave the version alone: other clients hold its ETag in If-Match, and a
  // new version would make their next write fail for a change that never happened (issue 24, item 10).
  test.each([
    ['shape B, an empty patch', '/users', {}],
    ['shape A, an empty patch', '/api/users', {}],
    ['shape B, every member as stored', '/users', { firstName: 'Ada', lastName: 'Byron' }],
    ['shape A, name and email as stored', '/api/users', { name: 'Ada Byron' }],
  ])('%s changes no version, ETag or updatedAt, and answers 200 with the user', async (_case, base, body) => {
    const user = await newUser();
    const before = await storedUser(sut.server, user.id);
    const withEmail = 'lastName' in body || 'name' in body ? { ...body, email: user.email } : body;
    const res = await patch(`${base}/${user.id}`, withEmail);
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toBe('"1"');
    expect(res.body).toMatchObject(base === '/users' ? user : { id: user.id, name: 'Ada Byron', email: user.email, updatedAt: before!.updated_at });
    expect(await storedUser(sut.server, user.id)).toEqual(before);
    // Another client's write with the ETag it read before still applies.
    expect((await patch(`/users/${user.id}`, { lastName: 'Lovelace' }, { 'if-match': '"1"' })).status).toBe(200);
  });

  test('a patch that changes nothing still honours If-Match: the current tag is a 200, a stale one a 412', async () => {
    const user = await newUser();
    expect((await patch(`/users/${user.id}`, {}, { 'if-match': '"1"' })).headers.get('etag')).toBe('"1"');
    await patch(`/users/${user.id}`, { lastName: 'Lovelace' });
    expect((await patch(`/users/${user.id}`, { lastName: 'Lovelace' }, { 'if-match': '"1"' })).status).toBe(412);
    expect((await patch(`/api/users/${user.id}`, {}, { 'if-match': '"1"' })).status).toBe(412);
    expect(await storedUser(sut.server, user.id)).toMatchObject({ last_name: 'Lovelace', version: 2 });
  });

  test('a member that differs only in case is a change', async () => {
    const user = await newUser();
    const res = await patch(`/users/${user.id}`, { lastName: 'byron', email: user.email.toUpperCase() });
    expect(res.headers.get('etag')).toBe('"2"');
    expect(await storedUser(sut.server, user.id)).toMatchObject({ last_name: 'byron', email: user.email.toUpperCase(), version: 2 });
  });

  test.each([
    ['null, which would remove a required member', { email: null }, '/email'],
    ['an unknown member', { nickname: 'A' }, '/nickname'],
    ['an invalid e-mail address', { email: 'nope' }, '/email'],
    ['a blank first name', { firstName: '  ' }, '/firstName'],
  ])('a patch with %s is a 422 problem, and the user is untouched', async (_case, body, path) => {
    const user = await newUser();
    const res = await patch(`/users/${user.id}`, body);
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([expect.objectContaining({ path })]);
    expect(await storedUser(sut.server, user.id)).toMatchObject({ version: 1, last_name: 'Byron' });
  });

  test('a patch that is not an object is a 422 problem', async () => {
    const user = await newUser();
    expect((await patch(`/users/${user.id}`, ['lastName'])).status).toBe(422);
  });

  test('another media type is a 415 problem naming both accepted', async () => {
    const user = await newUser();
    const res = await patch(`/users/${user.id}`, { lastName: 'L' }, { 'content-type': 'text/plain' });
    expect(res.status).toBe(415);
    expect(res.body.detail).toBe('The request body must be application/merge-patch+json or application/json (got text/plain).');
  });

  test('If-Match: the current tag or * applies the patch; a stale tag is a 412 and changes nothing', async () => {
    const user = await newUser();
    expect((await patch(`/users/${user.id}`, { lastName: 'One' }, { 'if-match': '"1"' })).status).toBe(200);
    const stale = await patch(`/api/users/${user.id}`, { email: 'late@example.com' }, { 'if-match': '"1"' });
    expect(stale.status).toBe(412);
    expect(stale.body.detail).toBe(`User ${user.id} is at version 2, which If-Match does not name; nothing was changed.`);
    expect((await patch(`/users/${user.id}`, { lastName: 'Two' }, { 'if-match': '*' })).status).toBe(200);
    expect(await storedUser(sut.server, user.id)).toMatchObject({ last_name: 'Two', email: user.email, version: 3 });
  });

  test('an unknown id is a 404 problem', async () => {
    expect((await patch('/users/999999', { lastName: 'L' })).status).toBe(404);
    expect((await patch('/api/users/999999', { email: 'a@example.com' })).status).toBe(404);
  });

  test('concurrent patches of different members lose none of them', async () => {
    const user = await newUser();
    for (let round = 1; round <= 5; round++) {
      // Every last name is new in its round: a patch that sets the name already stored changes no version.
      const lastNames = Array.from({ length: 20 }, (_, i) => patch(`/users/${user.id}`, { lastName: `N${round}.${i}` }));
      const email = patch(`/users/${user.id}`, { email: `kept${round}@example.com` });
      const firstName = patch(`/api/users/${user.id}`, { name: `Kept${round}` });
      const statuses = (await Promise.all([email, ...lastNames, firstName])).map((res) => res.status);
      expect(statuses).toEqual(Array(22).fill(200));
      // Each patch wrote onto the version it read: the e-mail address and first name are never lost.
      expect(await storedUser(sut.server, user.id)).toMatchObject({ email: `kept${round}@example.com`, first_name: `Kept${round}`, version: 1 + 22 * round });
    }
  });
});

// A replace (PUT) that changes nothing leaves the version alone too, for the same reason: a client that saves
// a form unchanged must not make every other client's If-Match fail.
describeEachDialect((dialect) => {
  const sut = useTestServer({ dialect, env: { SEED_DEMO_DATA: 'false' } });
  const newUser = async () =>
    (await sut.api.post('/users', buildUserInput({ firstName: 'Ada', lastName: 'Byron', email: `ada.${Date.now()}.${Math.random()}@example.com` }))).body;

  test.each([
    ['shape B', '/users', (user: { email: string }) => ({ firstName: 'Ada', lastName: 'Byron', email: user.email })],
    ['shape A', '/api/users', (user: { email: string }) => ({ name: 'Ada Byron', email: user.email })],
  ])('%s: a PUT of every field as stored changes no version, with or without If-Match; a PUT that changes one does', async (_shape, base, same) => {
    const user = await newUser();
    const before = await storedUser(sut.server, user.id);
    for (const headers of [{}, { 'if-match': '"1"' }] as Record<string, string>[]) {
      const res = await sut.api.put(`${base}/${user.id}`, same(user), { headers });
      expect([res.status, res.headers.get('etag')]).toEqual([200, '"1"']);
      expect(await storedUser(sut.server, user.id)).toEqual(before);
    }
    const changed = await sut.api.put(`${base}/${user.id}`, { ...same(user), email: 'ada.changed@example.com' }, { headers: { 'if-match': '"1"' } });
    expect([changed.status, changed.headers.get('etag')]).toEqual([200, '"2"']);
    expect(await storedUser(sut.server, user.id)).toMatchObject({ email: 'ada.changed@example.com', version: 2 });
  });
});
