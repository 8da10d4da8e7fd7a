import type { ColumnType, Generated, Selectable } from 'kysely';

/** The `users` table as the store sees it (snake_case columns, timestamps as ISO 8601 text). */
export interface UsersTable {
  id: Generated<number>;
  first_name: string;
  last_name: string;
  email: string;
  created_at: string;
  updated_at: string;
  version: ColumnType<number, number | undefined, number>;
  /** Case-folded copies that lists search, filter and sort by (migration 2026-11-24-01); written with the fields. */
  first_name_key: string;
  last_name_key: string;
  email_key: string;
}

/** Facts the store keeps about itself, such as whether the demo data was ever seeded. */
export interface ServiceMetaTable {
  key: string;
  value: string;
}

/** Idempotency keys of creates, with the response each first produced (ISO 8601 text timestamps). */
export interface IdempotencyKeysTable {
  key: string;
  fingerprint: string;
  state: 'in-flight' | 'done';
  outcome: string | null;
  user_id: number | null;
  locked_until: string;
  /** The token of the request that holds the key; null on rows written before owners were recorded. */
  owner: string | null;
  /** The client (its normalised address) that used the key: with `key`, the primary key (migration 2026-11-25-01). */
  client: string;
  expires_at: string;
  created_at: string;
}

/** The number of users, in shards kept by triggers on `users` (migration 2026-11-23-04). */
export interface UserCountTable {
  shard: number;
  /** bigint: PostgreSQL hands it over as a string. */
  n: number | string;
}

/** Every table, for Kysely's type checking. */
export interface Tables {
  users: UsersTable;
  user_count: UserCountTable;
  service_meta: ServiceMetaTable;
  idempotency_keys: IdempotencyKeysTable;
}

/** One row of `users` as read. */
export type UserRow = Selectable<UsersTable>;
