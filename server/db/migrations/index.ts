import type { Migration, MigrationProvider } from 'kysely';
import * as createUsers from './2026-11-21-01-create-users.js';

/** Every migration by name; names sort in the order they must run. */
const migrations: Record<string, Migration> = {
  '2026-11-21-01-create-users': createUsers,
};

/** Hands Kysely's Migrator the migrations compiled into the service, so no directory is scanned at run time. */
export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
