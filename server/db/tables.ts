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
}

/** Facts the store keeps about itself, such as whether the demo data was ever seeded. */
export interface ServiceMetaTable {
  key: string;
  value: string;
}

/** Every table, for Kysely's type checking. */
export interface Tables {
  users: UsersTable;
  service_meta: ServiceMetaTable;
}

/** One row of `users` as read. */
export type UserRow = Selectable<UsersTable>;
