import { sql, type Kysely } from 'kysely';
import type { Write } from './group-commit.js';
import { DEMO_USERS } from '../domain/demo-users.js';
import type { Tables } from './tables.js';
import { newUserRow } from './user.repository.js';

export { DEMO_USERS } from '../domain/demo-users.js';

const SEEDED_KEY = 'demo-data-seeded';

/**
 * Seeds the demo users once in the life of a store: only when it is empty and was never seeded, so users an
 * operator deleted do not come back on restart. Safe when several processes start at once on one database.
 */
export async function seedDemoData(db: Kysely<Tables>, now: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const marked = await trx
      .insertInto('service_meta')
      .values({ key: SEEDED_KEY, value: now })
      .onConflict((oc) => oc.column('key').doNothing())
      .executeTakeFirst();
    if (Number(marked.numInsertedOrUpdatedRows ?? 0) === 0) return false;
    const existing = await trx.selectFrom('users').select('id').limit(1).executeTakeFirst();
    if (existing) return false;
    await trx
      .insertInto('users')
      .values(DEMO_USERS.map((user) => newUserRow(user, now)))
      .execute();
    return true;
  });
}

/**
 * Sandbox only (SQLite): forgets every user and idempotency key and restores the demo users, with ids from 1
 * again, in one transaction, so that a reader sees the old users or the new ones, never a mix.
 */
export function restoreDemoData(write: Write, now: string): Promise<void> {
  return write(async (trx) => {
    await trx.deleteFrom('idempotency_keys').execute();
    await trx.deleteFrom('users').execute();
    // AUTOINCREMENT remembers the largest id ever used here (https://www.sqlite.org/autoinc.html).
    await sql`delete from sqlite_sequence where name = 'users'`.execute(trx);
    await trx.insertInto('users').values(DEMO_USERS.map((user) => newUserRow(user, now))).execute();
  }, { atomic: true });
}
