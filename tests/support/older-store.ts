import { sql, type Kysely } from 'kysely';
import { down as dropNameOrderIndexes } from '../../server/db/migrations/2026-11-25-03-add-name-order-indexes.js';
import { down as reindexEveryUpdate } from '../../server/db/migrations/2026-11-27-01-reindex-only-changed-users.js';
import { down as unscopeIdempotencyKeys } from '../../server/db/migrations/2026-11-25-01-scope-idempotency-keys-by-client.js';
import type { Tables } from '../../server/db/tables.js';
import type { Dialect } from './test-store.js';

// Stores as earlier releases left them, made from a current one, to test that migrations bring them up to date.

/** Takes a store back to before migration 2026-11-27-01: SQLite's substring index re-indexes a user on every update that sets the keys (by its own `down`). */
export async function withReindexOnEveryUpdate(db: Kysely<Tables>, dialect: Dialect): Promise<void> {
  await reindexEveryUpdate(db as Kysely<unknown>, dialect);
  await sql`delete from kysely_migration where name = '2026-11-27-01-reindex-only-changed-users'`.execute(db);
}

/** Takes a store back to before migration 2026-11-25-03: no indexes for the orders by both names (by its own `down`; nor what later migrations added). */
export async function withoutNameOrderIndexes(db: Kysely<Tables>, dialect: Dialect): Promise<void> {
  await withReindexOnEveryUpdate(db, dialect);
  await dropNameOrderIndexes(db as Kysely<unknown>);
  await sql`delete from kysely_migration where name = '2026-11-25-03-add-name-order-indexes'`.execute(db);
}

/** Takes a store back to before migration 2026-11-25-02: searches read PostgreSQL's index through users_holding() only (nor what later migrations added). */
export async function withoutSearchFunction(db: Kysely<Tables>, dialect: Dialect): Promise<void> {
  await withoutNameOrderIndexes(db, dialect);
  if (dialect === 'postgres') await sql`drop function users_matching(text, text, integer)`.execute(db);
  await sql`delete from kysely_migration where name = '2026-11-25-02-add-search-function'`.execute(db);
}

/** Takes a store back to before migration 2026-11-25-01: idempotency keys one per key, whoever sent it (by its own `down`; nor what later migrations added). */
export async function withUnscopedIdempotencyKeys(db: Kysely<Tables>, dialect: Dialect): Promise<void> {
  await withoutSearchFunction(db, dialect);
  await unscopeIdempotencyKeys(db as Kysely<unknown>);
  await sql`delete from kysely_migration where name = '2026-11-25-01-scope-idempotency-keys-by-client'`.execute(db);
}

/** Takes a store back to before migration 2026-11-24-03: no pg_trgm index (SQLite has nothing to drop; nor what later migrations added). */
export async function withoutExtensionSearchIndex(db: Kysely<Tables>, dialect: Dialect): Promise<void> {
  await withUnscopedIdempotencyKeys(db, dialect);
  if (dialect === 'postgres') {
    await sql`drop index if exists users_search`.execute(db);
    await sql`drop function users_holding(text, integer)`.execute(db);
  }
  await sql`delete from kysely_migration where name = '2026-11-24-03-add-extension-search-index'`.execute(db);
}

/** Takes a store back to before migration 2026-11-24-02: no substring index (SQLite's FTS5; nor what later migrations added). */
export async function withoutSearchIndex(db: Kysely<Tables>, dialect: Dialect): Promise<void> {
  await withoutExtensionSearchIndex(db, dialect);
  if (dialect === 'sqlite') {
    for (const change of ['insert', 'update', 'delete']) await sql.raw(`drop trigger users_search_${change}`).execute(db);
    await sql`drop table users_search`.execute(db);
  }
  await sql`delete from kysely_migration where name = '2026-11-24-02-add-user-search-index'`.execute(db);
}

/** Takes a store back to before migration 2026-11-24-01: no folded key columns, no indexes on them (nor what later migrations added). */
export async function withoutSortKeys(db: Kysely<Tables>, dialect: Dialect): Promise<void> {
  await withoutSearchIndex(db, dialect);
  for (const key of ['first_name_key', 'last_name_key', 'email_key']) {
    await sql.raw(`drop index users_${key}_id`).execute(db);
    await sql.raw(`alter table users drop column ${key}`).execute(db);
  }
  await sql`delete from kysely_migration where name = '2026-11-24-01-add-user-sort-keys'`.execute(db);
}

/** Stores users as a release before the folded keys did: names, address and timestamps only. */
export async function insertWithoutKeys(db: Kysely<Tables>, users: ReadonlyArray<{ firstName: string; lastName: string; email: string }>): Promise<void> {
  const now = new Date().toISOString();
  for (let i = 0; i < users.length; i += 300) {
    const rows = users.slice(i, i + 300).map((u) => sql`(${u.firstName}, ${u.lastName}, ${u.email}, ${now}, ${now})`);
    await sql`insert into users (first_name, last_name, email, created_at, updated_at) values ${sql.join(rows)}`.execute(db);
  }
}
