import { sql, type Kysely } from 'kysely';
import type { Write } from './write.js';
import type { UserFields } from '../domain/user.js';
import type { Tables } from './tables.js';
import { newUserRow } from './sql-user-repository.js';

export { DEMO_USERS } from '../domain/demo-users.js';

const SEEDED_KEY = 'demo-data-seeded';

/** Users one INSERT writes: 8 values each, far below every dialect's limit on a statement's parameters. */
const INSERT_BATCH = 500;

/** Inserts the users in order (ids follow it), a batch per statement. */
async function insertUsers(trx: Kysely<Tables>, users: readonly UserFields[], now: string): Promise<void> {
  for (let i = 0; i < users.length; i += INSERT_BATCH) {
    await trx
      .insertInto('users')
      .values(users.slice(i, i + INSERT_BATCH).map((user) => newUserRow(user, now)))
      .execute();
  }
}

/**
 * Seeds a store's first users (the demo users, or USERS_FILE's) once in its life: only when it is empty and
 * was never seeded, so users an operator deleted do not come back on restart. Safe when several processes
 * start at once on one database.
 */
export async function seedDemoData(db: Kysely<Tables>, now: string, users: readonly UserFields[]): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const marked = await trx
      .insertInto('service_meta')
      .values({ key: SEEDED_KEY, value: now })
      .onConflict((oc) => oc.column('key').doNothing())
      .executeTakeFirst();
    if (Number(marked.numInsertedOrUpdatedRows ?? 0) === 0) return false;
    const existing = await trx.selectFrom('users').select('id').limit(1).executeTakeFirst();
    if (existing) return false;
    await insertUsers(trx, users, now);
    return true;
  });
}

/**
 * Sandbox only (SQLite): forgets every user and idempotency key and restores the first users (the demo users,
 * or USERS_FILE's), with ids from 1 again, in one transaction, so that a reader sees the old users or the new
 * ones, never a mix.
 */
export function restoreDemoData(write: Write, now: string, users: readonly UserFields[]): Promise<void> {
  return write(
    async (trx) => {
      await trx.deleteFrom('idempotency_keys').execute();
      await trx.deleteFrom('users').execute();
      // AUTOINCREMENT remembers the largest id ever used here (https://www.sqlite.org/autoinc.html).
      await sql`delete from sqlite_sequence where name = 'users'`.execute(trx);
      await insertUsers(trx, users, now);
    },
    { atomic: true },
  );
}
