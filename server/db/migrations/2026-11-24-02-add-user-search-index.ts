import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from './dialect.js';

// Frozen in time: a migration never imports application code, so later changes cannot rewrite history.

/**
 * A user's folded names and address as the index holds them, one per line (a search holds no line break),
 * from the columns of `row` (`new.` in a trigger, nothing in a query of users).
 */
const searchedText = (row: 'new.' | '') => `${row}first_name_key || char(10) || ${row}last_name_key || char(10) || ${row}email_key`;

/**
 * FTS5's trigram index (https://sqlite.org/fts5.html#the_trigram_tokenizer) over the folded copies, which are
 * already case-folded (case_sensitive 1 keeps them as they are). Contentless: it holds the index, not a second
 * copy of the text; contentless_delete lets triggers remove a user's entry.
 */
const SQLITE_SUBSTRING_INDEX = {
  create: [
    `create virtual table users_search using fts5(keys, content='', contentless_delete=1, tokenize='trigram case_sensitive 1')`,
    `insert into users_search (rowid, keys) select id, ${searchedText('')} from users`,
    `create trigger users_search_insert after insert on users begin
       insert into users_search (rowid, keys) values (new.id, ${searchedText('new.')}); end`,
    `create trigger users_search_update after update of first_name_key, last_name_key, email_key on users  begin
       delete from users_search where rowid = old.id;
       insert into users_search (rowid, keys) values (new.id, ${searchedText('new.')}); end`,
    `create trigger users_search_delete after delete on users begin delete from users_search where rowid = old.id; end`,
  ],
  drop: ['drop trigger users_search_insert', 'drop trigger users_search_update', 'drop trigger users_search_delete', 'drop table users_search'],
};

/**
 * A substring index of each user's folded names and address, where the database has one whose cost the
 * service can bound (SQLite's FTS5 trigram index; none yet on PostgreSQL, whose searches do not hold the
 * service's event loop). Filled from the users stored, in one statement (seconds per 1,000,000 users), once,
 * before the service listens.
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  if (dialect !== 'sqlite') return;
  for (const statement of SQLITE_SUBSTRING_INDEX.create) await sql.raw(statement).execute(db);
}

/** Drops the index and its triggers. */
export async function down(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  if (dialect !== 'sqlite') return;
  for (const statement of SQLITE_SUBSTRING_INDEX.drop) await sql.raw(statement).execute(db);
}
