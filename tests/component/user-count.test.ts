import { sql } from 'kysely';
import { buildUserInput } from '../support/builders.js';
import { storedCount } from '../support/stored.js';
import { describeEachDialect, type Dialect } from '../support/test-store.js';
import { httpClient, type HttpClient } from '../support/http-client.js';
import { startTestServer, useTestServer, type TestServer } from '../support/test-server.js';
import { newUserRow } from '../../server/db/sql-user-repository.js';
import { insertWithoutKeys, withoutSortKeys } from '../support/older-store.js';

// The total of a shape A page comes from a count the store keeps in the transaction of every insert and
// delete, not from counting every user per request. It must never drift from the rows.

const totalOf = async (api: HttpClient) => (await api.get('/api/users?per_page=1')).body.total as number;

/** Takes a store back to before the count existed, as an earlier version of the service left it. */
async function withoutCount(server: TestServer, dialect: Dialect): Promise<void> {
  const { db } = server.database;
  const drops =
    dialect === 'sqlite'
      ? ['drop trigger users_counted_insert', 'drop trigger users_counted_delete', 'drop table user_count']
      : ['insert', 'delete']
          .flatMap((change) => [`drop trigger users_counted_${change} on users`, `drop function users_counted_${change}()`])
          .concat('drop table user_count');
  for (const statement of drops) await sql.raw(statement).execute(db);
  await sql`delete from kysely_migration where name = '2026-11-23-04-count-users'`.execute(db);
}

describeEachDialect((dialect) => {
  const sut = useTestServer({ dialect, env: { SEED_DEMO_DATA: 'false' } });

  test('the total follows concurrent creates and deletes', async () => {
    const before = await totalOf(sut.api);
    const created = await Promise.all(Array.from({ length: 40 }, () => sut.api.post('/users', buildUserInput())));
    expect(created.map((res) => res.status)).toEqual(Array(40).fill(201));
    await Promise.all(created.slice(0, 15).map((res) => sut.api.delete(`/users/${res.body.id}`)));
    // A delete of a user already gone changes nothing.
    expect((await sut.api.delete(`/users/${created[0]!.body.id}`)).status).toBe(404);
    expect(await totalOf(sut.api)).toBe(before + 25);
    expect(await totalOf(sut.api)).toBe(await storedCount(sut.server));
  });

  test('both lists send the count as X-Total-Count, as json-server does', async () => {
    await Promise.all(Array.from({ length: 3 }, () => sut.api.post('/users', buildUserInput())));
    const stored = await storedCount(sut.server);
    const page = await sut.api.get('/api/users?page=2&per_page=2');
    expect(page.headers.get('x-total-count')).toBe(String(stored));
    expect(page.body.total).toBe(stored);
    const list = await sut.api.get('/users');
    expect(list.headers.get('x-total-count')).toBe(String(stored));
    expect(list.body).toHaveLength(stored);
  });

  test('a create that is rolled back leaves the total as it was', async () => {
    const before = await totalOf(sut.api);
    const failing = sut.server.database.write(
      async (trx) => {
        await trx
          .insertInto('users')
          .values(newUserRow({ firstName: 'Roll', lastName: 'Back', email: 'roll.back@example.com' }, 'x'))
          .execute();
        throw new Error('the unit fails after its insert');
      },
      { atomic: true },
    );
    await expect(failing).rejects.toThrow('the unit fails after its insert');
    expect(await totalOf(sut.api)).toBe(before);
    expect(await storedCount(sut.server)).toBe(before);
  });

  test('users written straight into the store, as an import would, are counted too', async () => {
    const before = await totalOf(sut.api);
    const now = new Date().toISOString();
    const rows = Array.from({ length: 30 }, (_, i) => newUserRow({ firstName: 'Imported', lastName: `N${i}`, email: `imported${i}@example.com` }, now));
    await sut.server.database.db.insertInto('users').values(rows).execute();
    await sut.server.database.db.deleteFrom('users').where('first_name', '=', 'Imported').where('last_name', 'in', ['N1', 'N2']).execute();
    expect(await totalOf(sut.api)).toBe(before + 28);
  });
});

describeEachDialect((dialect) => {
  test('a store from before the count has its users counted when it is migrated', async () => {
    const first = await startTestServer({ dialect, env: { SEED_DEMO_DATA: 'true' } });
    try {
      // A store of that release had no sort keys either, which came later.
      await withoutSortKeys(first.database.db, dialect);
      await withoutCount(first, dialect);
      // Users created while no trigger counts them.
      await insertWithoutKeys(
        first.database.db,
        Array.from({ length: 21 }, (_, i) => ({ firstName: 'Earlier', lastName: `N${i}`, email: `earlier${i}@example.com` })),
      );
      await first.stop();
      const again = await startTestServer({ dialect, store: first.store });
      try {
        const api = httpClient(again.url);
        expect(await totalOf(api)).toBe(12 + 21);
      } finally {
        await again.stop();
      }
    } finally {
      await first.cleanup();
    }
  });
});
