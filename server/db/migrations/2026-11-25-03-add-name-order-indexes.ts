import { sql, type Kysely } from 'kysely';

// Frozen in time: a migration never imports application code, so later changes cannot rewrite history.

/**
 * An index for each order a list can ask for by name or address, holding every folded copy a search looks in
 * after the columns it orders by, so that a search that examines users in that order reads the index alone
 * and looks up only the users that match: in name order, users lie all over the table, and reading each from
 * the table costs far more than reading the index (timed: docs/benchmarks.md).
 *
 * The orders by a name and then another field (the other name, or the address) each have one: read forwards
 * and backwards, in both directions of the first field (`first,last` and `-first,-last`; with `desc`,
 * `first,-last` and `-first,last`), ties broken by id in the direction of the last field. Without them, the
 * store sorts every user who shares the first name for each page: at 1,000,000 users with 16 first names,
 * 62,500 users a statement. An order by the address first needs
 * none: few users share one. Any further field sorts only the users that tie on the first two.
 */
const INDEXES = [
  ['users_email_order', 'email_key, id, first_name_key, last_name_key'],
  ['users_first_order', 'first_name_key, id, last_name_key, email_key'],
  ['users_last_order', 'last_name_key, id, first_name_key, email_key'],
  ['users_first_last_order', 'first_name_key, last_name_key, id, email_key'],
  ['users_first_last_desc_order', 'first_name_key, last_name_key desc, id desc, email_key'],
  ['users_last_first_order', 'last_name_key, first_name_key, id, email_key'],
  ['users_last_first_desc_order', 'last_name_key, first_name_key desc, id desc, email_key'],
  ['users_first_email_order', 'first_name_key, email_key, id, last_name_key'],
  ['users_first_email_desc_order', 'first_name_key, email_key desc, id desc, last_name_key'],
  ['users_last_email_order', 'last_name_key, email_key, id, first_name_key'],
  ['users_last_email_desc_order', 'last_name_key, email_key desc, id desc, first_name_key'],
] as const;

/** The indexes of migration 2026-11-24-01, which these replace. */
const REPLACED = ['email_key', 'first_name_key', 'last_name_key'] as const;

/** Builds them from the users stored (a few seconds per 1,000,000 users, once, before the service listens). */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [name, columns] of INDEXES) await sql.raw(`create index ${name} on users (${columns})`).execute(db);
  for (const key of REPLACED) await sql.raw(`drop index users_${key}_id`).execute(db);
}

/** Puts back the indexes they replaced, and drops them. */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const key of REPLACED) await sql.raw(`create index users_${key}_id on users (${key}, id)`).execute(db);
  for (const [name] of INDEXES) await sql.raw(`drop index ${name}`).execute(db);
}
