import type { Migration, MigrationProvider } from 'kysely/migration';
import type { DialectMigration, SqlDialect } from './dialect.js';
import * as createUsers from './2026-11-21-01-create-users.js';
import * as createIdempotencyKeys from './2026-11-21-02-create-idempotency-keys.js';
import * as addIdempotencyKeyOwner from './2026-11-23-01-add-idempotency-key-owner.js';
import * as addIdempotencyKeyClient from './2026-11-23-02-add-idempotency-key-client.js';
import * as createRateLimits from './2026-11-23-03-create-rate-limits.js';
import * as countUsers from './2026-11-23-04-count-users.js';
import * as addUserSortKeys from './2026-11-24-01-add-user-sort-keys.js';
import * as addUserSearchIndex from './2026-11-24-02-add-user-search-index.js';
import * as addExtensionSearchIndex from './2026-11-24-03-add-extension-search-index.js';
import * as scopeIdempotencyKeysByClient from './2026-11-25-01-scope-idempotency-keys-by-client.js';
import * as addSearchFunction from './2026-11-25-02-add-search-function.js';
import * as addNameOrderIndexes from './2026-11-25-03-add-name-order-indexes.js';
import * as reindexOnlyChangedUsers from './2026-11-27-01-reindex-only-changed-users.js';

/** Every migration by name; names sort in the order they must run. */
const migrations: Record<string, DialectMigration> = {
  '2026-11-21-01-create-users': createUsers,
  '2026-11-21-02-create-idempotency-keys': createIdempotencyKeys,
  '2026-11-23-01-add-idempotency-key-owner': addIdempotencyKeyOwner,
  '2026-11-23-02-add-idempotency-key-client': addIdempotencyKeyClient,
  '2026-11-23-03-create-rate-limits': createRateLimits,
  '2026-11-23-04-count-users': countUsers,
  '2026-11-24-01-add-user-sort-keys': addUserSortKeys,
  '2026-11-24-02-add-user-search-index': addUserSearchIndex,
  '2026-11-24-03-add-extension-search-index': addExtensionSearchIndex,
  '2026-11-25-01-scope-idempotency-keys-by-client': scopeIdempotencyKeysByClient,
  '2026-11-25-02-add-search-function': addSearchFunction,
  '2026-11-25-03-add-name-order-indexes': addNameOrderIndexes,
  '2026-11-27-01-reindex-only-changed-users': reindexOnlyChangedUsers,
};

/** The names of this version's migrations, in the order they run. */
export const MIGRATION_NAMES: readonly string[] = Object.keys(migrations).sort();

/** Hands Kysely's Migrator the migrations compiled into the service, so no directory is scanned at run time. */
export function migrationProvider(dialect: SqlDialect): MigrationProvider {
  return {
    getMigrations: async () =>
      Object.fromEntries(
        Object.entries(migrations).map(([name, migration]) => [
          name,
          { up: (db) => migration.up(db, dialect), ...(migration.down ? { down: (db) => migration.down!(db, dialect) } : {}) } satisfies Migration,
        ]),
      ),
  };
}
