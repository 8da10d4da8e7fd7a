import { sql, type Kysely, type RawBuilder } from 'kysely';

// Frozen in time: a migration never imports application code, so later changes cannot rewrite history.

const COLUMNS = sql.raw('client, "key", fingerprint, state, outcome, user_id, locked_until, owner, expires_at, created_at');

/**
 * Makes the table anew with another primary key and copies into it the rows of the old one that `rows`
 * picks: SQLite cannot change a primary key in place. Kysely runs SQLite's migrations outside a transaction,
 * so the steps run in one of their own there: a crash between them must not lose the table.
 */
async function rebuild(db: Kysely<unknown>, primaryKey: ['key'] | ['client', 'key'], rows: RawBuilder<unknown>): Promise<void> {
  const steps = async (trx: Kysely<unknown>) => {
    await trx.schema.alterTable('idempotency_keys').renameTo('idempotency_keys_old').execute();
    await trx.schema
      .createTable('idempotency_keys')
      .addColumn('client', 'text', (col) => (primaryKey.length > 1 ? col.notNull() : col))
      .addColumn('key', 'text', (col) => col.notNull())
      .addColumn('fingerprint', 'text', (col) => col.notNull())
      .addColumn('state', 'text', (col) => col.notNull())
      .addColumn('outcome', 'text')
      .addColumn('user_id', 'integer')
      .addColumn('locked_until', 'text', (col) => col.notNull())
      .addColumn('owner', 'text')
      .addColumn('expires_at', 'text', (col) => col.notNull())
      .addColumn('created_at', 'text', (col) => col.notNull())
      .addPrimaryKeyConstraint(`idempotency_keys_${primaryKey.join('_')}`, primaryKey)
      .execute();
    await sql`insert into idempotency_keys (${COLUMNS}) select ${COLUMNS} from idempotency_keys_old ${rows}`.execute(trx);
    // Index names belong to the schema, not the table: the old ones go with their table before they are made again.
    await trx.schema.dropTable('idempotency_keys_old').execute();
    await trx.schema.createIndex('idempotency_keys_expires_at').on('idempotency_keys').column('expires_at').execute();
    await trx.schema.createIndex('idempotency_keys_client_created_at').on('idempotency_keys').columns(['client', 'created_at']).execute();
  };
  await (db.isTransaction ? steps(db) : db.transaction().execute(steps));
}

/**
 * Makes each idempotency key its client's own: the primary key becomes (client, key), so that the same key
 * from another client is another row (another create), never the first client's. Each row copied keeps
 * working for the client that used it. Rows without a client (written before 2026-11-23-02) belong to no one
 * that can be told apart, and are dropped: they would have expired within a day.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await rebuild(db, ['client', 'key'], sql`where client is not null`);
}

/** Goes back to one row per key: of a key that several clients used, one client's row is kept. */
export async function down(db: Kysely<unknown>): Promise<void> {
  // `where true`: without it, SQLite would read `on conflict` as part of the `from` clause.
  await rebuild(db, ['key'], sql`where true on conflict do nothing`);
}
