import SqliteDatabase from 'better-sqlite3';
import { buildUserInput } from '../support/builders.js';
import { useTestServer } from '../support/test-server.js';

// On SQLite, selects run on a read-only connection of their own (server/db/sqlite/reader.ts), and whole
// replies are cached over the store's version it reads (server/http/reply-cache/). No read may miss a
// committed write: this process's own (through the API) or another's (here, a second connection to the file,
// as another worker or instance is).

const sut = useTestServer({ dialect: 'sqlite', env: { SEED_DEMO_DATA: 'true' } });
const ids = (users: Array<{ id: number }>) => users.map((user) => user.id);

test('a write through the API is in the next answer of every read that was answered before', async () => {
  const paths = ['/users', '/users?limit=50', '/api/users?page=1&per_page=50'];
  const before = await Promise.all(paths.map((path) => sut.api.get(path)));
  const again = await Promise.all(paths.map((path) => sut.api.get(path)));
  expect(again.map((res) => res.body)).toEqual(before.map((res) => res.body));
  const created = (await sut.api.post('/users', buildUserInput())).body as { id: number };
  const [full, limited, page] = await Promise.all(paths.map((path) => sut.api.get(path)));
  expect(ids(full!.body)).toContain(created.id);
  expect(ids(limited!.body)).toContain(created.id);
  expect(ids(page!.body.data)).toContain(created.id);
  expect(page!.body.total).toBe(before[2]!.body.total + 1);
  await sut.api.delete(`/users/${created.id}`);
  expect(ids((await sut.api.get('/users')).body)).not.toContain(created.id);
  expect((await sut.api.get(`/users/${created.id}`)).status).toBe(404);
});

test('a sorted list and one filtered by address are read again after a write', async () => {
  const input = buildUserInput({ lastName: 'Zzyzx', email: 'cached.answers@example.com' });
  const paths = ['/users?sort=-lastName&limit=5', '/api/users?sort=-last_name&per_page=5', `/users?email=${input.email}`];
  for (let i = 0; i < 2; i++) await Promise.all(paths.map((path) => sut.api.get(path)));
  const created = (await sut.api.post('/users', input)).body as { id: number };
  const [sorted, page, byEmail] = await Promise.all(paths.map((path) => sut.api.get(path)));
  expect(sorted!.body[0].id).toBe(created.id);
  expect(page!.body.data[0].id).toBe(created.id);
  expect(ids(byEmail!.body)).toEqual([created.id]);
  await sut.api.delete(`/users/${created.id}`);
  expect((await sut.api.get(paths[2]!)).body).toEqual([]);
});

test('a write committed by another connection to the file is read at once', async () => {
  expect((await sut.api.get('/users/3')).body.lastName).not.toBe('Elsewhere');
  const page = (await sut.api.get('/users?limit=50')).body as Array<{ id: number; lastName: string }>;
  const other = new SqliteDatabase(sut.server.store.sqliteFile!);
  try {
    other.prepare(`update users set last_name = 'Elsewhere', last_name_key = 'elsewhere', version = version + 1 where id = 3`).run();
  } finally {
    other.close();
  }
  expect((await sut.api.get('/users/3')).body.lastName).toBe('Elsewhere');
  const after = (await sut.api.get('/users?limit=50')).body as Array<{ id: number; lastName: string }>;
  expect(after.find((user) => user.id === 3)!.lastName).toBe('Elsewhere');
  expect(ids(after)).toEqual(ids(page));
});

test('a list read again is whole every time it is given (a list consumes the rows it sends)', async () => {
  const first = (await sut.api.get('/users')).body as unknown[];
  expect(first.length).toBeGreaterThan(1);
  for (let i = 0; i < 3; i++) expect((await sut.api.get('/users')).body).toEqual(first);
});
