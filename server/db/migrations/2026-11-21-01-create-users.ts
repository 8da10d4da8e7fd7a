import type { Kysely } from 'kysely';
import type { SqlFlavour } from './index.js';

// Frozen in time: a migration never imports application code, so later changes cannot rewrite history.

/** Creates the users table and the table of facts the store keeps about itself. */
export async function up(db: Kysely<unknown>, flavour: SqlFlavour): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'integer', (col) => flavour.generatedIntegerKey(col.primaryKey()))
    .addColumn('first_name', 'text', (col) => col.notNull())
    .addColumn('last_name', 'text', (col) => col.notNull())
    .addColumn('email', 'text', (col) => col.notNull())
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('updated_at', 'text', (col) => col.notNull())
    .addColumn('version', 'integer', (col) => col.notNull().defaultTo(1))
    .execute();
  await db.schema
    .createTable('service_meta')
    .addColumn('key', 'text', (col) => col.primaryKey())
    .addColumn('value', 'text', (col) => col.notNull())
    .execute();
}

/** Drops both tables. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('service_meta').execute();
  await db.schema.dropTable('users').execute();
}
