import { Kysely, sql, type CompiledQuery, type KyselyConfig } from 'kysely';
import type { QueryEvent } from '../tracing.js';
import type { DatabaseConfig, StoreTimeouts } from '../config.js';
import type { DialectSupport, SearchIndex } from './dialect-support.js';
import { migrateSchema, SchemaMismatch } from './migrate.js';
import { postgresOutage, sqliteOutage } from './outage.js';
import type { SharedCounts } from './postgres/counts.js';
import { refusedStartupParameter, type ConnectionFault } from './postgres/pool.js';
import { postgres } from './postgres/store.js';
import { sqlite } from './sqlite/store.js';
import type { Tables } from './tables.js';
import type { Write } from './write.js';

// Opens the store the configuration names: its dialect's support (sqlite/, postgres/), its schema migrated
// (migrate.ts), and one Database for the rest of the service, which never names a dialect.

/** An open database with its schema migrated, and a way to tell outages from bugs. */
export interface Database {
  readonly kind: DatabaseConfig['kind'];
  readonly db: Kysely<Tables>;
  /** Runs a unit of writes; it resolves once its changes are durable. All writes go through it. */
  readonly write: Write;
  /** The outage code of an error that means the store cannot answer now (down, killed, timed out, disk full, closed); undefined for a bug. */
  outage(error: unknown): string | undefined;
  /** Resolves when a request would find the store working: it answers a query, and (SQLite) its disk has room. */
  probe(): Promise<void>;
  /** Per-client counts every instance on this store shares; undefined where the store is one machine's (SQLite). */
  readonly sharedCounters: SharedCounts | undefined;
  /** The substring index of the users' folded names and addresses, where the store has one. */
  readonly searchIndex: SearchIndex | undefined;
  /**
   * Searching statements that may run at once. On PostgreSQL, half the pool: however many searches are under
   * way, the other half of the connections stays free for every other request. SQLite runs one statement at a
   * time on the event loop; there the number of statements per turn is the bound (see user-lists.ts).
   */
  readonly searchConnections: number;
  /**
   * Runs a select at once, on a read-only connection of its own (SQLite): no await, no queue behind a write's
   * transaction, and it sees every committed write (WAL). Undefined where selects go through Kysely: on
   * PostgreSQL, on a store in memory (a second connection would be another store), and when queries are traced.
   */
  readonly read: (<Row>(query: CompiledQuery<Row>) => Row[]) | undefined;
  /**
   * The store's version, read at once where the store can tell (the SQLite reader: it changes with every
   * commit, of this process or another): equal twice, nothing was committed in between. Undefined elsewhere.
   */
  readonly storeVersion: (() => number) | undefined;
  close(): Promise<void>;
}

/** How to open the store: its bounds, whom to tell when a connection fails, and when each query ends (tracing). */
export interface OpenOptions {
  /**
   * `apply` (the default) brings the schema up to date; `check` only checks that it is, and fails with a
   * SchemaMismatch naming the migrations it lacks (MIGRATE_AT_START=false). Both fail on a schema that holds
   * migrations this version does not know.
   */
  readonly migrations?: 'apply' | 'check';
  /** Told the migrations a start applied, in order (none when the schema was up to date). */
  readonly onMigrated?: (names: readonly string[]) => void;
  readonly timeouts?: StoreTimeouts;
  readonly onConnectionFault?: ConnectionFault;
  readonly onQuery?: (event: QueryEvent) => void;
  /** Opened to write alone (a writer thread): no reader (Database.read), whose connection it would never use. */
  readonly writesOnly?: boolean;
}

/** Kysely's log hook, called as each query ends (in the async context of the request that ran it). */
function queryLog(onQuery: (event: QueryEvent) => void): KyselyConfig['log'] {
  return (event) => onQuery({ sql: event.query.sql, durationMs: event.queryDurationMillis, failed: event.level === 'error' });
}

/** A store's bounds where its opener gives none. */
export const DEFAULT_TIMEOUTS: StoreTimeouts = { statementMs: 5000, connectMs: 5000, idleMs: 30_000, keepAliveMs: 10_000 };

function dialectSupport(config: DatabaseConfig, { timeouts = DEFAULT_TIMEOUTS, onConnectionFault = () => {} }: OpenOptions): DialectSupport {
  return config.kind === 'sqlite' ? sqlite(config.filename, timeouts) : postgres(config.url, config.poolSize, config.poolMode, timeouts, onConnectionFault);
}

/**
 * The outage code of an error opening the store (openDatabase wraps what the store threw), as `outage`
 * classifies requests' errors: the store is down, refuses, is starting or locked; undefined for anything else.
 */
export function openingOutage(config: DatabaseConfig, error: unknown): string | undefined {
  // A pooler that refuses the session's settings refuses them every time: no use waiting.
  if (refusedStartupParameter(error) !== undefined) return undefined;
  const cause = error instanceof Error && error.cause !== undefined ? error.cause : error;
  return config.kind === 'postgres' ? postgresOutage(cause) : sqliteOutage(cause);
}

/** Opens the database named by the configuration and brings its schema up to date. */
export async function openDatabase(config: DatabaseConfig, options: OpenOptions = {}): Promise<Database> {
  const support = dialectSupport(config, options);
  const db = new Kysely<Tables>({ dialect: support.dialect, ...(options.onQuery ? { log: queryLog(options.onQuery) } : {}) });
  let searchIndex: SearchIndex | undefined;
  try {
    const migrating = support.migrationDialect ? new Kysely<Tables>({ dialect: support.migrationDialect() }) : db;
    try {
      await migrateSchema(support, migrating, options);
    } finally {
      if (migrating !== db) await migrating.destroy();
    }
    searchIndex = await support.searchIndex(db);
  } catch (error) {
    await db.destroy();
    if (error instanceof SchemaMismatch) throw error;
    throw new Error(`Could not prepare the database: ${(error as Error).message}`, { cause: error });
  }
  const probe = async () => {
    await sql`select 1`.execute(db);
    await support.checkRoom();
  };
  const { sharedCounters, searchConnections } = support;
  // Traced queries go through Kysely, whose log makes their spans; a writer thread reads through no reader.
  const reader = options.onQuery || options.writesOnly ? undefined : support.reader();
  const close = async () => {
    reader?.close();
    await db.destroy();
  };
  return {
    kind: config.kind,
    db,
    write: support.writer(db),
    outage: support.outage,
    probe,
    sharedCounters,
    searchIndex,
    searchConnections,
    read: reader?.read,
    storeVersion: reader?.storeVersion,
    close,
  };
}
