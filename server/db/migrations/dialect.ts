import type { Migration } from 'kysely/migration';

/**
 * The SQL dialect a migration writes for. Each migration carries its own SQL for each (nothing it runs comes
 * from application code, which would rewrite it when edited); tests/migrations holds what each ran when written.
 */
export type SqlDialect = 'sqlite' | 'postgres';

/** A migration, told the dialect it writes for. */
export interface DialectMigration {
  up(db: Parameters<Migration['up']>[0], dialect: SqlDialect): Promise<void>;
  /** Undoes `up`. */
  down?(db: Parameters<Migration['up']>[0], dialect: SqlDialect): Promise<void>;
}
