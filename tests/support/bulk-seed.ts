import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import type { TestStore } from './test-store.js';

// Large stores written straight into the SQLite file: through the API, 300,000 users would take minutes.

function inTransaction(store: TestStore, sql: string, count: number, values: (i: number) => unknown[]): void {
  const db = new SqliteDatabase(store.sqliteFile!);
  try {
    const insert = db.prepare(sql);
    db.transaction(() => {
      for (let i = 0; i < count; i++) insert.run(...values(i));
    })();
  } finally {
    db.close();
  }
}

/** Adds `count` users to a migrated SQLite store. */
export function seedUsers(store: TestStore, count: number): void {
  const now = new Date().toISOString();
  const sql =
    'INSERT INTO users (first_name, first_name_key, last_name, last_name_key, email, email_key, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)';
  inTransaction(store, sql, count, (i) => [`Bulk${i}`, `bulk${i}`, 'User', 'user', `bulk${i}@example.com`, `bulk${i}@example.com`, now, now]);
}

/** Adds `count` idempotency keys that expired a day ago to a migrated SQLite store. */
export function seedExpiredKeys(store: TestStore, count: number): void {
  const past = new Date(Date.now() - 86_400_000).toISOString();
  const sql =
    "INSERT INTO idempotency_keys (client, key, fingerprint, state, locked_until, expires_at, created_at) VALUES ('127.0.0.1', ?, 'f', 'done', ?, ?, ?)";
  inTransaction(store, sql, count, (i) => [`expired-${i}`, past, past, past]);
}

/** How many idempotency keys the store holds. */
export function countKeys(store: TestStore): number {
  const db = new SqliteDatabase(store.sqliteFile!, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM idempotency_keys').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** Adds `count` users to a migrated PostgreSQL store, shaped as seedUsers makes them, in one statement. */
export async function seedPostgresUsers(store: TestStore, count: number): Promise<void> {
  const client = new pg.Client({ connectionString: store.url });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO users (first_name, first_name_key, last_name, last_name_key, email, email_key, created_at, updated_at)
       SELECT 'Bulk' || i, 'bulk' || i, 'User', 'user', 'bulk' || i || '@example.com', 'bulk' || i || '@example.com', now()::text, now()::text
       FROM generate_series(0, $1::integer - 1) AS i`,
      [count],
    );
    await client.query('ANALYZE users');
  } finally {
    await client.end();
  }
}

const FIRST_NAMES = ['Mira', 'Tobias', 'Priya', 'Ezra', 'Noor', 'Ann', 'Jonas', 'Lena', 'Omar', 'Sofia', 'Kenji', 'Ada', 'Luca', 'Ines', 'Tariq', 'Yuki'];
const LAST_NAMES = ['Castellan', 'Wren', 'Halvorsen', 'Lindqvist', 'Abernathy', 'Okafor', 'Moreau', 'Novak', 'Silva', 'Tanaka', 'Berg', 'Kaur'];

/**
 * The i-th of a varied population: names from small pools, so that sorts meet large groups of ties (as real
 * names do), and every 1,000th user sharing one address, so that an address filter matches many.
 */
export function variedUser(i: number): [first: string, last: string, email: string] {
  const first = FIRST_NAMES[i % FIRST_NAMES.length]!;
  const last = LAST_NAMES[Math.floor(i / FIRST_NAMES.length) % LAST_NAMES.length]!;
  return [first, last, i % 1000 === 0 ? 'shared@example.com' : `${first}.${last}.${i}@example.com`.toLowerCase()];
}

/** Adds `count` varied users (variedUser) to a migrated store of either dialect. */
export async function seedVariedUsers(store: TestStore, count: number): Promise<void> {
  const now = new Date().toISOString();
  if (store.sqliteFile !== undefined) {
    const sql =
      'INSERT INTO users (first_name, first_name_key, last_name, last_name_key, email, email_key, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)';
    inTransaction(store, sql, count, (i) => {
      const [first, last, email] = variedUser(i);
      return [first, first.toLowerCase(), last, last.toLowerCase(), email, email, now, now];
    });
    return;
  }
  const client = new pg.Client({ connectionString: store.url });
  await client.connect();
  try {
    const [firsts, lasts] = [FIRST_NAMES, LAST_NAMES].map((names) => `ARRAY[${names.map((name) => `'${name}'`).join(',')}]`);
    const first = `(${firsts})[i % ${FIRST_NAMES.length} + 1]`;
    const last = `(${lasts})[(i / ${FIRST_NAMES.length}) % ${LAST_NAMES.length} + 1]`;
    const email = `CASE WHEN i % 1000 = 0 THEN 'shared@example.com' ELSE lower(${first} || '.' || ${last} || '.' || i || '@example.com') END`;
    await client.query(
      `INSERT INTO users (first_name, first_name_key, last_name, last_name_key, email, email_key, created_at, updated_at)
       SELECT ${first}, lower(${first}), ${last}, lower(${last}), ${email}, ${email}, $2, $2 FROM generate_series(0, $1::integer - 1) AS i`,
      [count, now],
    );
    await client.query('ANALYZE users');
  } finally {
    await client.end();
  }
}
