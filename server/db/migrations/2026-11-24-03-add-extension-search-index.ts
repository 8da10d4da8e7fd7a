import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from './dialect.js';

// Frozen in time: a migration never imports application code, so later changes cannot rewrite history.

/** A user's folded names and address as the index holds them, one per line. */
const SEARCHED_TEXT = `first_name_key || E'\\n' || last_name_key || E'\\n' || email_key`;

/** A name quoted as an SQL identifier. */
const identifier = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * The substring index of the databases whose index rests on an extension: pg_trgm's GIN index
 * (https://www.postgresql.org/docs/current/pgtrgm.html) over the folded copies, where the database has
 * pg_trgm or lets the service install it (a trusted extension since PostgreSQL 13: a role with CREATE on the
 * database may). Where it cannot, the migration still succeeds, the service says so when it starts, and
 * searches examine users one by one; an operator may add the index later (docs/deployment.md). Built from the
 * users stored, in one statement that holds off writes while it runs, once, before the service listens.
 *
 * A GIN index answers with a bitmap of every entry of the trigrams it is asked about: it cannot stop after a
 * few, as FTS5 does. users_holding() reads through the index whatever the planner guesses (a sequential scan
 * stopped by a LIMIT costs in proportion to where the matches lie in the table, which statistics cannot
 * tell): it runs with sequential and plain index scans off, so a bitmap scan of the GIN index is the only
 * plan, and it stops at `most` users that match the pattern (all when null). ROWS tells the planner it
 * returns few users (it is asked only once they are known to be few), so that it looks each up by id rather
 * than join them to every user of a table read whole.
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  if (dialect !== 'postgres') return;
  // The migration runs in a transaction: a refusal must not abort it.
  await sql`savepoint install_pg_trgm`.execute(db);
  try {
    await sql`create extension if not exists pg_trgm`.execute(db);
    await sql`release savepoint install_pg_trgm`.execute(db);
  } catch {
    await sql`rollback to savepoint install_pg_trgm`.execute(db);
  }
  await sql
    .raw(`create function users_holding(pattern text, most integer) returns table (match_id integer) language sql stable rows 20
      set enable_seqscan = off set enable_indexscan = off
      as $$ select id from users where (${SEARCHED_TEXT}) like pattern limit most $$`)
    .execute(db);
  const { rows } = await sql<{ schema: string }>`
      select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`.execute(db);
  // Named with the extension's schema, which need not be on the service's search_path.
  if (rows[0]) await sql.raw(`create index users_search on users using gin ((${SEARCHED_TEXT}) ${identifier(rows[0].schema)}.gin_trgm_ops)`).execute(db);
}

/** Drops the index and the function (and leaves the extension, which other schemas may use). */
export async function down(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`drop index if exists users_search`.execute(db);
  await sql`drop function users_holding(text, integer)`.execute(db);
}
