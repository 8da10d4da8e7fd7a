import pg from 'pg';
import { fingerprintOf } from '../../server/handlers/idempotent-create.js';
import { buildDemoUserInput, buildUserInput } from '../support/builders.js';
import { requestFrom } from '../support/request-from.js';
import { storedCount, storedUser } from '../support/stored.js';
import { describeEachDialect, postgresAvailable } from '../support/test-store.js';
import { useTestServer, withTestServer, type TestServer } from '../support/test-server.js';

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

  test('the key keeps the user as created, and a retry renders the first response from it', async () => {
    const key = newKey();
    const first = await sut.api.post('/users', buildUserInput(), { headers: { 'idempotency-key': key } });
    const stored = await storedKey(sut.server, key);
    expect(JSON.parse(stored!.outcome!)).toEqual({ created: expect.objectContaining({ id: first.body.id, version: 1, email: first.body.email }) });
  });

  test('a key stored by an earlier version, holding the rendered response, is replayed as it is', async () => {
    const key = newKey();
    const input = buildUserInput();
    const first = await sut.api.post('/users', input, { headers: { 'idempotency-key': key } });
    const rendered = { status: 201, body: { ...first.body, lastName: 'AsStoredThen' }, headers: { Location: `/users/${first.body.id}`, ETag: '"1"' } };
    await sut.server.database.db.updateTable('idempotency_keys').set({ outcome: JSON.stringify(rendered) }).where('key', '=', key).execute();
    const retry = await sut.api.post('/users', input, { headers: { 'idempotency-key': key } });
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(rendered.body);
    expect(retry.headers.get('location')).toBe(`/users/${first.body.id}`);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
  });

  test('a key whose holder died (its lock ran out) is taken over by the retry', async () => {
    const key = newKey();
    const input = buildUserInput();
    const now = new Date().toISOString();
    await sut.server.database.db
      .insertInto('idempotency_keys')
      .values({
        key,
        fingerprint: await fingerprintOf('createUser', input),
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let tries = 0; tries < 100; tries++) {
    if (await condition()) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting until ${what}`);
}

// A create that is slow, not dead: its lock runs out while its INSERT waits (here on a table lock another
// connection holds), a retry takes the key over, and then both INSERTs go through. Only one may commit.
(postgresAvailable ? describe : describe.skip)('postgres: a create stalled past its lock', () => {
  test('cannot commit beside the retry that took its key over: one user, and the retry replays it', () =>
    withTestServer({ dialect: 'postgres', env: { SEED_DEMO_DATA: 'false', IDEMPOTENCY_LOCK_SECONDS: '1' } }, async (server, api) => {
      const locker = new pg.Client({ connectionString: server.store.url });
      await locker.connect();
      try {
        const key = newKey();
        const input = buildUserInput();
        const headers = { 'idempotency-key': key };
        await locker.query('begin');
        await locker.query('lock table users in exclusive mode');
        const first = api.post('/users', input, { headers });
        await until(async () => (await storedKey(server, key)) !== undefined, 'the first request claims the key');
        const firstLock = (await storedKey(server, key))!.locked_until;
        await sleep(1100);
        const retry = api.post('/users', input, { headers });
        await until(async () => (await storedKey(server, key))!.locked_until !== firstLock, 'the retry takes the key over');
        await locker.query('commit');
        const statuses = (await Promise.all([first, retry])).map((res) => res.status);
        expect(statuses).toEqual([409, 201]);
        const { rows } = await locker.query('select count(*)::int as n from users where email = $1', [input.email]);
        expect(rows[0].n).toBe(1);
        const replay = await api.post('/users', input, { headers });
        expect(replay.headers.get('idempotent-replayed')).toBe('true');
        expect(replay.body.id).toBe((await retry).body.id);
      } finally {
        await locker.query('rollback').catch(() => undefined);
        await locker.end();
      }
    }));
});

// Unique keys must not grow the store without bound: each client keeps its newest keys, others keep theirs.
test('each client keeps its newest IDEMPOTENCY_KEYS_PER_CLIENT keys; older ones are forgotten, other clients keep theirs', () =>
  withTestServer({ env: { SEED_DEMO_DATA: 'false', IDEMPOTENCY_KEYS_PER_CLIENT: '5' } }, async (server) => {
    const url = `${server.url}/users`;
    const keyed = (from: string, key: string, input: object) => requestFrom(url, { from, method: 'POST', json: input, headers: { 'idempotency-key': key } });
    const inputs = Array.from({ length: 8 }, () => buildUserInput());
    const keys = inputs.map(() => newKey());
    const other = { key: newKey(), input: buildUserInput() };
    expect((await keyed('127.0.0.3', other.key, other.input)).status).toBe(201);
    for (const [i, input] of inputs.entries()) expect((await keyed('127.0.0.2', keys[i]!, input)).status).toBe(201);
    const kept = await server.database.db.selectFrom('idempotency_keys').select('key').where('client', '=', '127.0.0.2').execute();
    expect(kept.map((row) => row.key).sort()).toEqual(keys.slice(3).sort());
    // The newest still replay; the oldest is forgotten, so its retry is a new create; the other client's still replays.
    expect((await keyed('127.0.0.2', keys[7]!, inputs[7]!)).headers['idempotent-replayed']).toBe('true');
    expect((await keyed('127.0.0.3', other.key, other.input)).headers['idempotent-replayed']).toBe('true');
    const forgotten = await keyed('127.0.0.2', keys[0]!, inputs[0]!);
    expect(forgotten.status).toBe(201);
    expect(forgotten.headers['idempotent-replayed']).toBeUndefined();
  }));
