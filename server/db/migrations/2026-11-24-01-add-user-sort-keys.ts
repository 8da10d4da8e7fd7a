import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from './dialect.js';

// Frozen in time: a migration never imports application code, so later changes cannot rewrite history.

/** How the keys of rows stored before this migration are made: the same folding the service writes with. */
const fold = (text: string) => text.toLowerCase();

const KEYS = [
  ['first_name_key', 'first_name'],
  ['last_name_key', 'last_name'],
  ['email_key', 'email'],
] as const;

/**
 * A text column that compares and sorts by code point, whatever the database's locale: SQLite's default
 * collation (BINARY) compares UTF-8 bytes; PostgreSQL's follows its locale (en_US sorts "a" beside "A"), "C"
 * is byte order.
 */
const BYTE_ORDER_TEXT = { sqlite: 'text', postgres: 'text collate "C"' } as const;

/** Rows whose keys one statement fills in: 4 parameters each, far below every dialect's limit. */
const BATCH = 500;

/**
 * Case-folded copies of the names and the e-mail address, which lists search, filter and sort by, each
 * indexed with the id that breaks ties. The service computes them when it writes (Unicode case folding, the
 * same in every dialect, where SQL `lower()` folds only A-Z in SQLite); they sort by code point in every
 * dialect (BYTE_ORDER_TEXT), so a cursor made on one store means the same on another.
 */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  for (const [key] of KEYS) {
    await db.schema
      .alterTable('users')
      .addColumn(key, sql.raw(BYTE_ORDER_TEXT[dialect]), (column) => column.notNull().defaultTo(''))
      .execute();
  }
  // Rows stored before: in batches by id, each one statement that sets the keys of its rows from a VALUES list.
  for (let after = 0; ; ) {
    const { rows } = await sql<{ id: number; first_name: string; last_name: string; email: string }>`
      select id, first_name, last_name, email from users where id > ${after} order by id limit ${BATCH}`.execute(db);
    if (rows.length === 0) break;
    const values = sql.join(rows.map((row) => sql`(cast(${row.id} as integer), ${fold(row.first_name)}, ${fold(row.last_name)}, ${fold(row.email)})`));
    await sql`
      with folded (id, first_name_key, last_name_key, email_key) as (values ${values})
      update users set
        first_name_key = (select folded.first_name_key from folded where folded.id = users.id),
        last_name_key = (select folded.last_name_key from folded where folded.id = users.id),
        email_key = (select folded.email_key from folded where folded.id = users.id)
      where id in (select id from folded)`.execute(db);
    after = rows[rows.length - 1]!.id;
  }
  for (const [key] of KEYS) await db.schema.createIndex(`users_${key}_id`).on('users').columns([key, 'id']).execute();
}

/** Drops the indexes and the keys. */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [key] of KEYS) {
    await db.schema.dropIndex(`users_${key}_id`).execute();
    await db.schema.alterTable('users').dropColumn(key).execute();
  }
}
