import { STREAM_SLICE_SIZE } from '../../server/domain/user.service.js';
import { useTestServer, withTestServer } from '../support/test-server.js';
import { describeEachDialect } from '../support/test-store.js';
import { newUserRow } from '../../server/db/sql-user-repository.js';

// The shape B list is streamed from the store in keyset slices; it must still be the complete list, in order.
// A list short enough for one chunk (16 KiB) is not streamed: it is sent whole, with its length.

test('a short list is sent whole, with a Content-Length', () =>
  withTestServer({}, async (_server, api) => {
    const res = await api.get('/users');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('transfer-encoding')).toBeNull();
    expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(JSON.stringify(res.body)));
    expect(res.body.map((user: { id: number }) => user.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  }));

describeEachDialect((dialect) => {
  const sut = useTestServer({ dialect });
  const total = STREAM_SLICE_SIZE * 3 + 7;

  beforeAll(async () => {
    const db = sut.server.database.db;
    const now = new Date().toISOString();
    const rows = Array.from({ length: total - 12 }, (_, i) => newUserRow({ firstName: `Bulk${i}`, lastName: 'User', email: `bulk${i}@example.com` }, now));
    for (let i = 0; i < rows.length; i += 200)
      await db
        .insertInto('users')
        .values(rows.slice(i, i + 200))
        .execute();
    // A gap in the ids, across a slice boundary, must not end the stream early.
    await db
      .deleteFrom('users')
      .where('id', 'in', [STREAM_SLICE_SIZE, STREAM_SLICE_SIZE + 1])
      .execute();
  });

  test('GET /users streams every user, in id order, across several slices', async () => {
    const res = await sut.api.get('/users');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    const ids = res.body.map((user: { id: number }) => user.id);
    expect(ids).toHaveLength(total - 2);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).not.toContain(STREAM_SLICE_SIZE);
    expect(res.body.at(-1)).toMatchObject({ firstName: `Bulk${total - 13}` });
  });

  test('the shape A pages add up to the same collection', async () => {
    const seen: number[] = [];
    for (let page = 1; ; page++) {
      const res = await sut.api.get(`/api/users?page=${page}&per_page=100`);
      seen.push(...res.body.data.map((u: { id: number }) => u.id));
      if (page >= res.body.total_pages) break;
    }
    expect(seen).toEqual((await sut.api.get('/users')).body.map((u: { id: number }) => u.id));
  });
});
