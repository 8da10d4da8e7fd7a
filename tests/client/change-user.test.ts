import { changeUser, createUserRecordsClient } from '../../client/src/index.js';
import { useTestServer } from '../support/test-server.js';

// changeUser against the real server, with a second client that writes in between, as another tab or user would.

const sut = useTestServer();
const clients = () => [createUserRecordsClient({ baseUrl: sut.server.url }), createUserRecordsClient({ baseUrl: sut.server.url })] as const;
const stored = async (id: number) => {
  const read = await clients()[0].GET('/users/{id}', { params: { path: { id } } });
  if (read.status !== 200) throw new Error(`expected 200, got ${read.status}`);
  return { user: read.data, etag: read.headers.ETag };
};

test("by default a change made in between stops changeUser: nothing is written over it, and the conflict carries the other client's user and ETag", async () => {
  const [client, other] = clients();
  let asked = 0;
  const result = await changeUser(client, '/users/{id}', 3, async () => {
    asked++;
    await other.PATCH('/users/{id}', { params: { path: { id: 3 } }, body: { lastName: 'Theirs' } });
    return { lastName: 'Mine' };
  });
  const after = await stored(3);
  expect(after.user.lastName).toBe('Theirs');
  expect(asked).toBe(1);
  expect(result).toMatchObject({ conflict: true, attempts: 1, current: after, problem: { status: 412 }, response: { status: 412 } });
});

test('a stale known ETag is a conflict too, in either shape; the conflict given back as known changes the user', async () => {
  const [client, other] = clients();
  const before = await stored(4);
  const demoRead = await client.GET('/api/users/{id}', { params: { path: { id: 4 } } });
  if (demoRead.status !== 200) throw new Error(`expected 200, got ${demoRead.status}`);
  await other.PATCH('/users/{id}', { params: { path: { id: 4 } }, body: { firstName: 'Changed' } });
  const stale = await changeUser(client, '/users/{id}', 4, () => ({ lastName: 'Mine' }), { known: before });
  if (!stale.conflict) throw new Error('expected a conflict');
  expect(stale.current.user.firstName).toBe('Changed');
  const decided = await changeUser(client, '/users/{id}', 4, () => ({ lastName: 'Mine' }), { known: stale.current });
  expect(decided).toMatchObject({ conflict: false, attempts: 1, user: { firstName: 'Changed', lastName: 'Mine' } });
  const demo = await changeUser(client, '/api/users/{id}', 4, () => ({ name: 'Someone Else' }), {
    known: { user: demoRead.data.data, etag: demoRead.headers.ETag },
  });
  if (!demo.conflict) throw new Error('expected a conflict');
  expect(demo.current.user).toMatchObject({ id: 4, first_name: 'Changed', last_name: 'Mine' });
  expect((await stored(4)).user).toMatchObject({ firstName: 'Changed', lastName: 'Mine' });
});

test('retry: true asks change again with the user as the other client left it, up to attempts, then answers the conflict', async () => {
  const [client, other] = clients();
  const seen: string[] = [];
  const changed = await changeUser(
    client,
    '/users/{id}',
    5,
    async (user) => {
      seen.push(user.email);
      if (seen.length === 1) await other.PATCH('/users/{id}', { params: { path: { id: 5 } }, body: { email: 'elsewhere@example.com' } });
      return { lastName: `${user.lastName}-${seen.length}` };
    },
    { retry: true },
  );
  expect(seen).toEqual([expect.not.stringMatching('elsewhere'), 'elsewhere@example.com']);
  if (changed.conflict) throw new Error('expected the change');
  expect(changed).toMatchObject({ attempts: 2, user: { id: 5, email: 'elsewhere@example.com' } });
  expect(await stored(5)).toEqual({ user: changed.user, etag: changed.etag });
  let tries = 0;
  const always = await changeUser(
    client,
    '/users/{id}',
    5,
    async (user) => {
      await other.PATCH('/users/{id}', { params: { path: { id: 5 } }, body: { firstName: `Other-${++tries}` } });
      return { lastName: `${user.lastName}!` };
    },
    { retry: true, attempts: 2 },
  );
  expect(always).toMatchObject({ conflict: true, attempts: 2, current: await stored(5) });
  expect((await stored(5)).user).toMatchObject({ firstName: 'Other-2', lastName: changed.user.lastName });
});
