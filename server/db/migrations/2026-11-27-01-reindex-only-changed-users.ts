import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from './dialect.js';

// Frozen in time: a migration never imports application code, so later changes cannot rewrite history.

/**
 * The trigger that re-indexes a user whose folded names or address an UPDATE sets, `when` it holds (SQLite
 * fires a trigger `of` columns whenever the UPDATE sets them, changed or not).
 */
const searchUpdateTrigger = (when: string) =>
  `create trigger users_search_update after update of first_name_key, last_name_key, email_key on users ${when} begin
       delete from users_search where rowid = old.id;
       insert into users_search (rowid, keys) values (new.id, new.first_name_key || char(10) || new.last_name_key || char(10) || new.email_key); end`;

/**
 * The substring index re-indexes a user on an update only when the user's folded names or address changed:
 * a PUT or PATCH that keeps them (a retried PUT, a change of case, a change of nothing) does not rewrite the
 * user's trigrams, most of what such a write would cost SQLite. Replaces one trigger; nothing to do where the
 * database has none (PostgreSQL).
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  if (dialect !== 'sqlite') return;
  await sql`drop trigger users_search_update`.execute(db);
  const changed = 'when old.first_name_key is not new.first_name_key or old.last_name_key is not new.last_name_key or old.email_key is not new.email_key';
  await sql.raw(searchUpdateTrigger(changed)).execute(db);
}

/** Re-indexes on every update that sets them again. */
export async function down(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  if (dialect !== 'sqlite') return;
  await sql`drop trigger users_search_update`.execute(db);
  await sql.raw(searchUpdateTrigger('')).execute(db);
}
