import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from './dialect.js';

// Frozen in time: a migration never imports application code, so later changes cannot rewrite history.

/** A user's folded names and address as the index holds them, one per line. */
const SEARCHED_TEXT = `first_name_key || E'\\n' || last_name_key || E'\\n' || email_key`;

/**
 * The function through which a search reads an extension's substring index (PostgreSQL's), finding the users
 * that hold a text and stopping at a number of them: users_holding() could only stop at users that hold a
 * coarser key, so a count of the users that hold the text itself read every holder of the key.
 * users_matching(key, needle, most) reads the GIN index only (as users_holding does), narrowed by `key` (a LIKE
 * pattern every such user holds; strpos, which no index serves, then checks the needle itself), and stops at
 * `most` of them (all when null). ROWS as for users_holding.
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql
    .raw(`create function users_matching(key text, needle text, most integer) returns table (match_id integer) language sql stable rows 20
       set enable_seqscan = off set enable_indexscan = off
       as $$ select id from users where (${SEARCHED_TEXT}) like key and strpos(${SEARCHED_TEXT}, needle) > 0 limit most $$`)
    .execute(db);
}

/** Drops the function. */
export async function down(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`drop function users_matching(text, text, integer)`.execute(db);
}
