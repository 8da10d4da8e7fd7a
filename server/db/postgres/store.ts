import { PostgresDialect, sql } from 'kysely';
import type { StoreTimeouts } from '../../config.js';
import type { PoolMode } from '../../config-settings.js';
import type { DialectSupport } from '../dialect-support.js';
import { postgresOutage } from '../outage.js';
import { postgresCounts } from './counts.js';
import { createPostgresPool, type ConnectionFault } from './pool.js';
import { postgresSearchIndex } from './search-index.js';
import { postgresWriter } from './writes.js';

// A PostgreSQL database as the service's store: its pool, its writes and its search index.

/**
 * How long a statement of a migration may take on PostgreSQL. Building an index over every user is one
 * statement (pg_trgm's takes seconds per 1,000,000 users), far beyond a request's statement timeout; a
 * migration runs once, before the service listens.
 */
const MIGRATION_STATEMENT_MS = 30 * 60_000;

export function postgres(url: string, poolSize: number, poolMode: PoolMode, timeouts: StoreTimeouts, onFault: ConnectionFault): DialectSupport {
  const pool = createPostgresPool(url, poolSize, timeouts, onFault, poolMode);
  return {
    dialect: new PostgresDialect({ pool }),
    // One connection, closed when the migrations are done.
    migrationDialect: () => new PostgresDialect({ pool: createPostgresPool(url, 1, { ...timeouts, statementMs: MIGRATION_STATEMENT_MS }, onFault, poolMode) }),
    migratesInOneTransaction: true,
    sharedCounters: postgresCounts(url, poolMode, timeouts, onFault),
    kind: 'postgres',
    searchIndex: async (db) => {
      const { rows } = await sql<{ present: boolean }>`
        select exists (select 1 from pg_indexes where schemaname = current_schema() and indexname = 'users_search') as present`.execute(db);
      return rows[0]!.present ? postgresSearchIndex : undefined;
    },
    searchConnections: Math.max(1, Math.floor(poolSize / 2)),
    reader: () => undefined,
    outage: postgresOutage,
    // The server's disk is not ours to see; a full one fails writes with 53100, which readiness hears of.
    checkRoom: async () => {},
    writer: postgresWriter,
    // Kysely looks for its migration tables in every schema unless told which one: name the schema that
    // search_path selects, so that several services (or test runs) can share one database.
    async migrationSchema(db) {
      const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
      const schema = rows[0]?.schema;
      if (!schema) throw new Error('no schema of search_path exists in this database');
      return schema;
    },
  };
}
