import type { ColumnDefinitionBuilder, Kysely } from 'kysely';
import type { Migration, MigrationProvider } from 'kysely/migration';
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

/**
 * The few things a migration cannot say the same way in every SQL dialect, which each dialect's store
 * (sqlite/store.ts, postgres/store.ts) supplies; migrations stay free of application code and of dialect names.
 */
export interface SqlFlavour {
  /** An integer primary key the database assigns and never hands out twice. */
  generatedIntegerKey(column: ColumnDefinitionBuilder): ColumnDefinitionBuilder;
  /**
   * Statements that create triggers keeping `counter` (rows of shard and n) in step with the rows of `table`:
   * each insert adds one to the shard of its id modulo `shards`, each delete takes one away.
   */
  countingTriggers(count: { table: string; counter: string; shards: number }): string[];
  /** Statements that drop what `countingTriggers` created. */
  droppingTriggers(count: { table: string; counter: string }): string[];
  /** The type of a text column that compares and sorts by code point, whatever the database's locale. */
  readonly byteOrderText: string;
  /**
   * Statements that create a substring index of each user's folded names and address (`users_search`), fill
   * it from the users stored, and keep it in step with every insert, update and delete (triggers); and the
   * statements that drop it. Empty where the database has none that the service can bound (see sqlite/store.ts and postgres/store.ts).
   */
  readonly substringIndex: { readonly create: readonly string[]; readonly drop: readonly string[] };
  /**
   * Statements that make `substringIndex`'s triggers re-index a user only when one of the folded copies it
   * holds changed, and the statements that undo that; empty where the database has no such triggers.
   */
  readonly reindexOnlyChanged: { readonly create: readonly string[]; readonly drop: readonly string[] };
  /**
   * Creates a substring index that rests on an extension the database may lack (PostgreSQL's pg_trgm): it
   * installs the extension where the database lets it and creates the index where the extension is, and
   * succeeds either way, so that a database without it still migrates. Nothing where the substring index
   * needs no extension (SQLite's, made by `substringIndex`).
   */
  readonly optionalSubstringIndex: { create(db: Kysely<unknown>): Promise<void>; drop(db: Kysely<unknown>): Promise<void> };
  /**
   * Statements that create the function through which a search reads the extension's substring index,
   * `users_matching(key, needle, most)`, and that drop it; empty where the index is read without one.
   */
  readonly searchFunction: { readonly create: readonly string[]; readonly drop: readonly string[] };
}

/** A migration that needs to know the flavour of SQL it writes. */
export interface FlavouredMigration {
  up(db: Parameters<Migration['up']>[0], flavour: SqlFlavour): Promise<void>;
  /** Undoes `up`. */
  down?(db: Parameters<Migration['up']>[0], flavour: SqlFlavour): Promise<void>;
}

/** Every migration by name; names sort in the order they must run. */
const migrations: Record<string, FlavouredMigration> = {
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
export function migrationProvider(flavour: SqlFlavour): MigrationProvider {
  return {
    getMigrations: async () =>
      Object.fromEntries(
        Object.entries(migrations).map(([name, migration]) => [
          name,
          { up: (db) => migration.up(db, flavour), ...(migration.down ? { down: (db) => migration.down!(db, flavour) } : {}) } satisfies Migration,
        ]),
      ),
  };
}
