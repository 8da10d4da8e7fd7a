import type { TestServer } from './test-server.js';

/** The row as stored, read straight from the database, to assert stored state rather than responses. */
export function storedUser(server: TestServer, id: number) {
  return server.database.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** How many users the store holds. */
export async function storedCount(server: TestServer): Promise<number> {
  const row = await server.database.db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
