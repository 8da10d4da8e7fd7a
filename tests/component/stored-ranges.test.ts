import { encodeCursor, FIELDS } from '../../server/handlers/cursors.js';
import { orderOf } from '../../server/domain/user-query.js';
import { buildUserInput } from '../support/builders.js';
import { storedUser } from '../support/stored.js';
import { useTestServer } from '../support/test-server.js';
import { describeEachDialect } from '../support/test-store.js';

// Inputs past what the stores' columns can hold (issue 24, item 7): ids and versions are PostgreSQL
// `integer` (32 bits), and its `text` cannot hold NUL. PostgreSQL failed such a statement (500, a logged
// stack) where SQLite answered; both stores must give the same answer, decided before a store sees the value.

const INT32_MAX = 2 ** 31 - 1;
type Written = [layout: 1, order: string, direction: 'a' | 'b', keys: (string | number)[]];
/** A cursor of layout 1 (JSON), as the service wrote before, or of layout 2, as it writes now. */
const cursorOf = (written: Written, layout: 1 | 2 = 1) =>
  layout === 1
    ? Buffer.from(JSON.stringify(written)).toString('base64url')
    : encodeCursor(orderOf(written[1], FIELDS), written[2] === 'a' ? { after: written[3] } : { before: written[3] });

describeEachDialect((dialect) => {
  const sut = useTestServer({ dialect, env: { SEED_DEMO_DATA: 'false' } });
  const newUser = async () => (await sut.api.post('/users', buildUserInput())).body.id as number;
  /** A merge patch that changes the last name, in the path's shape. */
  const patch = (path: string, headers: Record<string, string>) =>
    sut.api.request('PATCH', path, {
      raw: JSON.stringify(path.startsWith('/api') ? { name: 'Ada Changed' } : { lastName: 'Changed' }),
      headers: { 'content-type': 'application/merge-patch+json', ...headers },
    });

  test.each(
    ([1, 2] as const).flatMap((layout) =>
      (
        [
          ['an id past 32 bits', [1, 'id', 'a', [INT32_MAX + 1]]],
          ['a descending id past 32 bits', [1, '-id', 'b', [2 ** 40]]],
          ['an id past 32 bits after a name', [1, 'lastName,id', 'a', ['smith', INT32_MAX + 1]]],
          ['a NUL in a name', [1, 'lastName,id', 'a', ['smi\u0000th', 1]]],
          ['a NUL in an e-mail address, read backwards', [1, 'email,id', 'b', ['\u0000', 1]]],
        ] as [string, Written][]
      ).map(([name, written]) => [name, layout, written] as const),
    ),
  )('a forged cursor holding %s (layout %d) is a 400 that names the cursor, in both shapes', async (_case, layout, written) => {
    await newUser();
    const cursor = cursorOf(written, layout);
    for (const path of [`/users?limit=2&cursor=${cursor}`, `/api/users?cursor=${cursor}`]) {
      const res = await sut.api.get(path);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ type: 'urn:user-records:problem:invalid-parameter', errors: [expect.objectContaining({ path: '/cursor' })] });
    }
  });

  test('a cursor at the largest id a store holds is a list (empty: no user follows it)', async () => {
    await newUser();
    for (const layout of [1, 2] as const) {
      const res = await sut.api.get(`/users?limit=2&cursor=${cursorOf([1, 'id', 'a', [INT32_MAX]], layout)}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
    }
  });

  test.each(['"9999999999"', `"${INT32_MAX + 1}"`, `"${INT32_MAX + 1}", "7"`])(
    'If-Match %s names no version a user can have: PUT, PATCH and DELETE are 412, and the user is untouched',
    async (ifMatch) => {
      const id = await newUser();
      const before = await storedUser(sut.server, id);
      const headers = { 'if-match': ifMatch };
      const answers = [
        await sut.api.put(`/users/${id}`, buildUserInput(), { headers }),
        await patch(`/users/${id}`, headers),
        await patch(`/api/users/${id}`, headers),
        await sut.api.delete(`/api/users/${id}`, { headers }),
      ];
      expect(answers.map((res) => res.status)).toEqual([412, 412, 412, 412]);
      expect(answers[0]!.body).toMatchObject({ type: 'urn:user-records:problem:precondition-failed', status: 412 });
      expect(await storedUser(sut.server, id)).toEqual(before);
    },
  );

  test('If-Match listing a version past 32 bits beside the current one applies the change', async () => {
    const id = await newUser();
    expect((await patch(`/users/${id}`, { 'if-match': '"9999999999", "1"' })).status).toBe(200);
    expect(await storedUser(sut.server, id)).toMatchObject({ last_name: 'Changed', version: 2 });
  });

  test('If-None-Match naming a version past 32 bits gets the user, 200', async () => {
    const id = await newUser();
    const res = await sut.api.get(`/users/${id}`, { headers: { 'if-none-match': '"9999999999"' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toBe('"1"');
  });

  test.each([`/users/${INT32_MAX + 1}`, `/api/users/${INT32_MAX + 1}`, '/users/9999999999'])(
    "an id past 32 bits in a path, %s, is the contract's 400",
    async (path) => {
      const res = await sut.api.get(path);
      expect(res.status).toBe(400);
      expect(res.body.errors.map((error: { path: string }) => error.path)).toContain('/id');
      expect((await sut.api.get(`/users/${INT32_MAX}`)).status).toBe(404);
    },
  );

  test.each([
    ['/users?q=a%00b', '/q'],
    ['/users?email=a%00@example.com', '/email'],
    ['/api/users?q=%00', '/q'],
  ])("a NUL in a filter, %s, is the contract's 400", async (path, parameter) => {
    const res = await sut.api.get(path);
    expect(res.status).toBe(400);
    expect(res.body.errors.map((error: { path: string }) => error.path)).toContain(parameter);
  });

  test("a NUL in a field of a body is the contract's 422", async () => {
    const res = await sut.api.post('/users', buildUserInput({ lastName: 'By\u0000ron' }));
    expect(res.status).toBe(422);
    expect(res.body.errors.map((error: { path: string }) => error.path)).toContain('/lastName');
  });
});
