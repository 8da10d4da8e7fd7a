import pg from 'pg';
import { createMemoryRepository } from '../../server/db/memory-user-repository.js';
import { createUserRepository } from '../../server/db/sql-user-repository.js';
import { DomainError } from '../../server/domain/errors.js';
import { createUserService, type UserService } from '../../server/domain/user.service.js';
import { createUserOnce, fingerprintOf } from '../../server/handlers/idempotent-create.js';
import { sql } from 'kysely';
import { buildDemoUserInput, buildUserInput } from '../support/builders.js';
import { withUnscopedIdempotencyKeys } from '../support/older-store.js';
import { requestFrom } from '../support/request-from.js';
import { storedCount, storedUser } from '../support/stored.js';
import { describeEachDialect, postgresAvailable } from '../support/test-store.js';
import { startTestServer, useTestServer, withTestServer, type TestServer } from '../support/test-server.js';

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
    await sut.server.database.db
      .updateTable('idempotency_keys')
      .set({ outcome: JSON.stringify(rendered) })
      .where('key', '=', key)
      .execute();
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
        client: '127.0.0.1',
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
    await sut.server.database.db
      .updateTable('idempotency_keys')
      .set({ expires_at: new Date(Date.now() - 1).toISOString() })
      .where('key', '=', key)
      .execute();
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

  // Keys belong to the client that sent them (its address, as the limits count it): another client's same
  // key, by chance or by guessing, must neither replay nor refuse, nor be told that the key is in use.
  test('another client with the same key gets its own new user; each client replays only its own', async () => {
    const url = `${sut.server.url}/users`;
    const post = (from: string, input: object) => requestFrom(url, { from, method: 'POST', json: input, headers: { 'idempotency-key': key } });
    const key = newKey();
    const [input, otherInput] = [buildUserInput(), buildUserInput()];
    const before = await storedCount(sut.server);
    const first = await post('127.0.0.2', input);
    const second = await post('127.0.0.3', input);
    const third = await post('127.0.0.4', otherInput);
    for (const res of [first, second, third]) {
      expect(res.status).toBe(201);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
    }
    expect(new Set([first.body.id, second.body.id, third.body.id]).size).toBe(3);
    expect(third.body.email).toBe(otherInput.email);
    expect(await storedCount(sut.server)).toBe(before + 3);
    // Each client's retry replays its own first answer, none of the others'.
    for (const [from, sent, original] of [
      ['127.0.0.2', input, first],
      ['127.0.0.3', input, second],
      ['127.0.0.4', otherInput, third],
    ] as const) {
      const retry = await post(from, sent);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.body).toEqual(original.body);
      expect(retry.headers.location).toBe(original.headers.location);
    }
    expect(await storedCount(sut.server)).toBe(before + 3);
    const rows = await sut.server.database.db.selectFrom('idempotency_keys').select(['client', 'user_id']).where('key', '=', key).orderBy('client').execute();
    expect(rows).toEqual([
      { client: '127.0.0.2', user_id: first.body.id },
      { client: '127.0.0.3', user_id: second.body.id },
      { client: '127.0.0.4', user_id: third.body.id },
    ]);
  });

  test('a key another client holds in flight is no 409 for this client', async () => {
    const url = `${sut.server.url}/users`;
    const key = newKey();
    const input = buildUserInput();
    const post = (from: string) => requestFrom(url, { from, method: 'POST', json: input, headers: { 'idempotency-key': key } });
    expect((await post('127.0.0.2')).status).toBe(201);
    await sut.server.database.db
      .updateTable('idempotency_keys')
      .set({ state: 'in-flight', outcome: null, locked_until: new Date(Date.now() + 60_000).toISOString() })
      .where('key', '=', key)
      .execute();
    const other = await post('127.0.0.3');
    expect(other.status).toBe(201);
    expect(other.headers['idempotent-replayed']).toBeUndefined();
    expect((await post('127.0.0.2')).status).toBe(409);
  });

  // MSW's handlers (client/src/msw.ts) and the sandbox's mocks run the memory repository: it must key by client alike.
  test("the memory repository scopes keys, and trims each client's, as this store does", async () => {
    const [k1, k2, k3] = [newKey(), newKey(), newKey()];
    const bodies = [buildUserInput(), buildUserInput()];
    const steps = [
      ['a', k1, 0],
      ['b', k1, 0],
      ['a', k1, 0],
      ['b', k1, 1],
      ['c', k1, 1],
      ['b', k1, 0],
      ['a', k2, 0],
      ['a', k3, 0],
      ['a', k1, 0],
      ['b', k1, 0],
      ['c', k3, 1],
      ['c', k1, 1],
    ] as const;
    /** What each step got: a user (numbered by first sight, as ids differ between stores), a replay, or an error. */
    async function outcomes(users: UserService) {
      const seen: number[] = [];
      const results: string[] = [];
      for (const [client, key, body] of steps) {
        const request = { operationId: 'createUser', body: bodies[body], fields: bodies[body]!, idempotencyKey: key, client };
        try {
          const { id, headers } = await createUserOnce<{ id: number; headers?: Record<string, string> }>(users, request, (user) => ({ id: user.id }));
          if (!seen.includes(id)) seen.push(id);
          results.push(`user ${seen.indexOf(id)}${headers?.['Idempotent-Replayed'] ? ' replayed' : ''}`);
        } catch (error) {
          results.push(error instanceof DomainError ? error.kind : String(error));
        }
      }
      return results;
    }
    const options = { keysPerClient: 2 };
    const inMemory = await outcomes(createUserService(createMemoryRepository(), options));
    expect(inMemory).toEqual(await outcomes(createUserService(createUserRepository(sut.server.database), options)));
    expect(inMemory).toEqual([
      'user 0',
      'user 1',
      'user 0 replayed',
      'idempotency-key-reused',
      'user 2',
      'user 1 replayed',
      // a's third key makes it forget its first: k1 from a is new again; b's and c's are theirs still.
      'user 3',
      'user 4',
      'user 5',
      'user 1 replayed',
      'user 6',
      'user 2 replayed',
    ]);
  });

  test('keys stored before keys were scoped keep replaying for their client alone; keys without a client are gone', async () => {
    const first = await startTestServer({ dialect, env: { SEED_DEMO_DATA: 'false' } });
    try {
      const [key, clientless] = [newKey(), newKey()];
      const input = buildUserInput();
      const post = (server: TestServer, from: string, withKey: string) =>
        requestFrom(`${server.url}/users`, { from, method: 'POST', json: input, headers: { 'idempotency-key': withKey } });
      const created = await post(first, '127.0.0.2', key);
      await withUnscopedIdempotencyKeys(first.database.db, dialect);
      const at = new Date().toISOString();
      const later = new Date(Date.now() + 60_000).toISOString();
      // As a release before 2026-11-23 stored it: no client.
      await sql`insert into idempotency_keys (key, fingerprint, state, outcome, locked_until, expires_at, created_at) values (${clientless}, ${await fingerprintOf('createUser', input)}, 'done', ${JSON.stringify({ created: created.body })}, ${at}, ${later}, ${at})`.execute(
        first.database.db,
      );
      await first.stop();
      const again = await startTestServer({ dialect, store: first.store, env: { SEED_DEMO_DATA: 'false' } });
      try {
        const replay = await post(again, '127.0.0.2', key);
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(replay.body).toEqual(created.body);
        for (const [from, withKey] of [
          ['127.0.0.3', key],
          ['127.0.0.2', clientless],
        ] as const) {
          const res = await post(again, from, withKey);
          expect(res.status).toBe(201);
          expect(res.headers['idempotent-replayed']).toBeUndefined();
        }
        expect(await storedCount(again)).toBe(3);
      } finally {
        await again.stop();
      }
    } finally {
      await first.cleanup();
    }
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

// Behind a proxy every connection is the proxy's: the scope is the client the proxy vouches for, as for the limits.
test('behind TRUST_PROXY, keys are scoped by the address the proxy appended, not by what the client wrote', () =>
  withTestServer({ env: { SEED_DEMO_DATA: 'false', TRUST_PROXY: '1' } }, async (server) => {
    const key = newKey();
    const input = buildUserInput();
    const post = (forwardedFor: string) =>
      requestFrom(`${server.url}/users`, {
        from: '127.0.0.2',
        method: 'POST',
        json: input,
        headers: { 'idempotency-key': key, 'x-forwarded-for': forwardedFor },
      });
    const first = await post('198.51.100.7');
    const other = await post('203.0.113.9');
    expect(other.headers['idempotent-replayed']).toBeUndefined();
    expect(other.body.id).not.toBe(first.body.id);
    // Naming the first client in an entry of its own does not make this one that client.
    const forged = await post('198.51.100.7, 203.0.113.9');
    expect(forged.headers['idempotent-replayed']).toBe('true');
    expect(forged.body.id).toBe(other.body.id);
    expect((await post('198.51.100.7')).body.id).toBe(first.body.id);
  }));
