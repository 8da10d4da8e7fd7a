import { StoreUnavailableError } from '../domain/errors.js';
import type { UserRepository } from '../domain/user-repository.js';
import type { User, UserFields } from '../domain/user.js';
import type { Database } from './database.js';
import type { UserRow } from './tables.js';

/** Maps a stored row to the domain record: the one place that knows the column names. */
export function toUser(row: UserRow): User {
  return {
    id: row.id,
    firstName: row.first_name,
    lastName: row.last_name,
    email: row.email,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: row.version,
  };
}

const toColumns = (fields: UserFields) => ({
  first_name: fields.firstName,
  last_name: fields.lastName,
  email: fields.email,
});

/** The user repository over Kysely; store outages surface as StoreUnavailableError. */
export function createUserRepository({ db, isUnavailable }: Database): UserRepository {
  async function guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw isUnavailable(error) ? new StoreUnavailableError({ cause: error }) : error;
    }
  }
  const users = () => db.selectFrom('users').selectAll();

  return {
    create: (fields, now) =>
      guard(async () => {
        const values = { ...toColumns(fields), created_at: now, updated_at: now };
        return toUser(await db.insertInto('users').values(values).returningAll().executeTakeFirstOrThrow());
      }),
    findById: (id) =>
      guard(async () => {
        const row = await users().where('id', '=', id).executeTakeFirst();
        return row && toUser(row);
      }),
    listAll: () => guard(async () => (await users().orderBy('id').execute()).map(toUser)),
    listSlice: (offset, limit) =>
      guard(() =>
        db.transaction().execute(async (trx) => {
          const rows = await trx.selectFrom('users').selectAll().orderBy('id').limit(limit).offset(offset).execute();
          const { total } = await trx
            .selectFrom('users')
            .select((eb) => eb.fn.countAll<number>().as('total'))
            .executeTakeFirstOrThrow();
          return { users: rows.map(toUser), total: Number(total) };
        }),
      ),
    replace: (id, fields, now) =>
      guard(async () => {
        const row = await db
          .updateTable('users')
          .set((eb) => ({ ...toColumns(fields), updated_at: now, version: eb('version', '+', 1) }))
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirst();
        return row && toUser(row);
      }),
    delete: (id) =>
      guard(async () => {
        const result = await db.deleteFrom('users').where('id', '=', id).executeTakeFirst();
        return Number(result.numDeletedRows) > 0;
      }),
  };
}
