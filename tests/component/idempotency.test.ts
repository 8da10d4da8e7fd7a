import { fingerprintOf } from '../../server/handlers/idempotent-create.js';
import { buildDemoUserInput, buildUserInput } from '../support/builders.js';
import { storedCount, storedUser } from '../support/stored.js';
import { useTestServer, type TestServer } from '../support/test-server.js';
import { describeEachDialect } from '../support/test-store.js';

// Idempotency-Key on POST: a retry gets the first response, never a second user.

let sequence = 0;
const newKey = () => `key-${process.pid}-${Date.now()}-${++sequence}`;

function storedKey(server: TestServer, key: string) {
  return server.database.db.selectFrom('idempotency_keys').selectAll().where('key', '=', key).executeTakeFirst();
}

describeEachDialect((dialect) => {
  const sut = useTestServer({ dialect, env: { SEED_DEMO_DATA: 'false' } });

  test.each([
    ['shape A', '/api/users', buildDemoUserInput],
    ['shape B', '/users', buildUserInput],
  ])('%s: a retry with the same key and body gets the original 201, and no second user', async (_shape, path, build) => {
    const key = newKey();
    const input = build();
    const before = await storedCount(sut.server);
    const first = await sut.api.post(path, input, { headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    // The user changes in between: the replay is still the response the first request got.
    await sut.api.put(`/users/${first.body.id}`, buildUserInput());
    const retry = await sut.api.post(path, input, { headers: { 'idempotency-key': key } });
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('location')).toBe(first.headers.get('location'));
    expect(retry.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await storedCount(sut.server)).toBe(before + 1);
  });

  test('member order does not make a body different', async () => {
    const key = newKey();
    const first = await sut.api.post('/users', { firstName: 'A', lastName: 'B', email: 'ab@example.com' }, { headers: { 'idempotency-key': key } });
    const retry = await sut.api.post('/users', { email: 'ab@example.com', lastName: 'B', firstName: 'A' }, { headers: { 'idempotency-key': key } });
    expect(retry.body.id).toBe(first.body.id);
  });

  test.each([
    ['a different body', '/users', () => buildUserInput()],
    ['another operation', '/api/users', () => buildDemoUserInput()],
  ])('the same key with %s is a 422 problem, and nothing is stored', async (_case, path, build) => {
    const key = newKey();
    await sut.api.post('/users', buildUserInput(), { headers: { 'idempotency-key': key } });
    const before = await storedCount(sut.server);
    const res = await sut.api.post(path, build(), { headers: { 'idempotency-key': key } });
    expect(res.status).toBe(422);
    expect(res.body.type).toBe('urn:user-records:problem:idempotency-key-reused');
    expect(await storedCount(sut.server)).toBe(before);
  });

  test('a key still held by a request in flight is a 409 problem with Retry-After', async () => {
    const key = newKey();
    const input = buildUserInput();
    await sut.api.post('/users', input, { headers: { 'idempotency-key': key } });
    // Put the key back in the state a request holds it in while it works.
    await sut.server.database.db
      .updateTable('idempotency_keys')
      .set({ state: 'in-flight', outcome: null, locked_until: new Date(Date.now() + 60_000).toISOString() })
      .where('key', '=', key)
      .execute();
    const res = await sut.api.post('/users', input, { headers: { 'idempotency-key': key } });
    expect(res.status).toBe(409);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.body.type).toBe('urn:user-records:problem:idempotency-key-in-flight');
  });

  test('a key whose holder died (its lock ran out) is taken over by the retry', async () => {
    const key = newKey();
    const input = buildUserInput();
    const now = new Date().toISOString();
    await sut.server.database.db
      .insertInto('idempotency_keys')
      .values({
        key,
        fingerprint: fingerprintOf('createUser', input),
        state: 'in-flight',
        locked_until: new Date(Date.now() - 1000).toISOString(),
        expires_at: new Date(Date.now() + 60_000).toISOString(),
        created_at: now,
      })
      .execute();
    const before = await storedCount(sut.server);
    const retry = await sut.api.post('/users', input, { headers: { 'idempotency-key': key } });
    expect(retry.status).toBe(201);
    expect(await storedCount(sut.server)).toBe(before + 1);
    expect(await storedKey(sut.server, key)).toMatchObject({ state: 'done', user_id: retry.body.id });
  });

  test('an expired key counts as new', async () => {
    const key = newKey();
    const input = buildUserInput();
    const first = await sut.api.post('/users', input, { headers: { 'idempotency-key': key } });
    await sut.server.database.db.updateTable('idempotency_keys').set({ expires_at: new Date(Date.now() - 1).toISOString() }).where('key', '=', key).execute();
    const again = await sut.api.post('/users', input, { headers: { 'idempotency-key': key } });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(first.body.id);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
  });

  test('keys are kept for 24 hours', async () => {
    const key = newKey();
    await sut.api.post('/users', buildUserInput(), { headers: { 'idempotency-key': key } });
    const row = await storedKey(sut.server, key);
    const ttl = Date.parse(row!.expires_at) - Date.parse(row!.created_at);
    expect(ttl).toBe(24 * 60 * 60 * 1000);
  });

  test.each([
    ['a space', 'has space'],
    ['256 characters', 'x'.repeat(256)],
    ['a tab', 'tab\tkey'],
    ['a non-ASCII letter', 'caf\u00e9'],
  ])('a key with %s is a 400 problem', async (_case, key) => {
    const before = await storedCount(sut.server);
    const res = await sut.api.post('/users', buildUserInput(), { headers: { 'idempotency-key': key } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe('/Idempotency-Key');
    expect(await storedCount(sut.server)).toBe(before);
  });

  test('1,000 creates, each sent three times and some at once, make exactly 1,000 users', async () => {
    const before = await storedCount(sut.server);
    const send = async (key: string, input: object): Promise<number> => {
      for (;;) {
        const res = await sut.api.post('/users', input, { headers: { 'idempotency-key': key } });
        if (res.status === 201) return res.body.id;
        expect(res.status).toBe(409);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    const createThrice = async () => {
      const key = newKey();
      const input = buildUserInput();
      const [a, b] = await Promise.all([send(key, input), send(key, input)]);
      const c = await send(key, input);
      expect(new Set([a, b, c]).size).toBe(1);
      return a;
    };
    const ids: number[] = [];
    for (let wave = 0; wave < 20; wave++) ids.push(...(await Promise.all(Array.from({ length: 50 }, createThrice))));
    expect(new Set(ids).size).toBe(1000);
    expect(await storedCount(sut.server)).toBe(before + 1000);
    for (const id of ids.slice(0, 5)) expect(await storedUser(sut.server, id)).toBeDefined();
  }, 120_000);
});
