import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import {
  CompiledQuery,
  Kysely,
  Migrator,
  PostgresDialect,
  sql,
  SqliteAdapter,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type SqliteDialectConfig,
} from 'kysely';
import pg from 'pg';
import type { DatabaseConfig } from '../config.js';
import { groupCommit, type Write } from './group-commit.js';
import { migrationProvider, type SqlFlavour } from './migrations/index.js';
import type { Tables } from './tables.js';

// The only module that names a SQL dialect.

/** An open database with its schema migrated, and a way to tell outages from bugs. */
export interface Database {
  readonly kind: DatabaseConfig['kind'];
  readonly db: Kysely<Tables>;
  /** Runs a unit of writes; it resolves once its changes are durable. All writes go through it. */
  readonly write: Write;
  /** True for errors that mean the store cannot answer now (down, locked, I/O, closed), not that the query is wrong. */
  isUnavailable(error: unknown): boolean;
  close(): Promise<void>;
}

interface DialectSupport {
  readonly dialect: Dialect;
  readonly flavour: SqlFlavour;
  isUnavailable(error: unknown): boolean;
  /** How units of writes run: in a transaction each, or committed together. */
  writer(db: Kysely<Tables>): Write;
  /** Schema that holds Kysely's migration tables, when the dialect has schemas. */
  migrationSchema(db: Kysely<Tables>): Promise<string | undefined>;
}

const SQLITE_OUTAGE = /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|READONLY|CORRUPT|NOTADB|PROTOCOL)/;
// Class 08 connection exceptions, 53 insufficient resources, 57P0x shutdown (https://www.postgresql.org/docs/current/errcodes-appendix.html).
const POSTGRES_OUTAGE = /^(08|53|57P0)/;
const NETWORK_OUTAGE = /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EHOSTUNREACH|EPIPE|EAI_AGAIN)$/;
const CLOSED = /database connection is not open|driver has already been destroyed|Connection terminated|timeout exceeded when trying to connect|Cannot use a pool after calling end/i;

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

function isClosed(error: unknown): boolean {
  return error instanceof Error && CLOSED.test(error.message);
}

/**
 * Several processes may share one SQLite file (WORKERS, or instances started at once). In WAL mode a
 * transaction that starts as a reader cannot become a writer once another process has written: SQLite
 * answers SQLITE_BUSY at once instead of waiting. `BEGIN IMMEDIATE` takes the write lock first, so
 * busy_timeout applies and the transaction sees the latest data (https://www.sqlite.org/lang_transaction.html).
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

/** Kysely runs SQLite migrations outside a transaction; SQLite has transactional DDL, so use it. */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

class MultiProcessSqliteDialect extends SqliteDialect {
  constructor(private readonly settings: SqliteDialectConfig) {
    super(settings);
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.settings);
  }

  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}

/** Prepared statements kept per SQL text; Kysely's driver would prepare every statement anew on each query. */
const STATEMENT_CACHE_SIZE = 256;

/**
 * better-sqlite3 wrapped so that `prepare` returns a cached statement for SQL it has seen: preparing was a
 * sixth of the CPU time of a GET (bench/, --cpu-prof). The SQL texts are few (values are parameters); the
 * cache is bounded anyway, dropping the oldest statement first.
 */
function withStatementCache(database: SqliteDatabase.Database): SqliteDialectConfig['database'] {
  const statements = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => database.close(),
    prepare(sql: string) {
      let statement = statements.get(sql);
      if (!statement) {
        statement = database.prepare(sql);
        statements.set(sql, statement);
        if (statements.size > STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!);
      }
      return statement;
    },
  } as SqliteDialectConfig['database'];
}

function sqlite(filename: string): DialectSupport {
  if (filename !== ':memory:') mkdirSync(dirname(filename), { recursive: true });
  const database = new SqliteDatabase(filename);
  // WAL lets readers run beside the writer; FULL syncs the log on every commit, so an acknowledged write
  // survives a power loss as well as a crash (https://www.sqlite.org/pragma.html#pragma_synchronous).
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = FULL');
  database.pragma('busy_timeout = 5000');
  return {
    dialect: new MultiProcessSqliteDialect({ database: withStatementCache(database) }),
    // AUTOINCREMENT: an id, once deleted, is never handed out again (https://www.sqlite.org/autoinc.html).
    flavour: { generatedIntegerKey: (column) => column.autoIncrement() },
    isUnavailable: (error) => SQLITE_OUTAGE.test(errorCode(error)) || isClosed(error),
    // One connection and an fsync per commit: concurrent writes share commits (see group-commit.ts).
    writer: groupCommit,
    migrationSchema: async () => undefined,
  };
}

function postgres(url: string, poolSize: number): DialectSupport {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 5000, idleTimeoutMillis: 30_000 });
  // An idle client that loses its connection must not crash the process; the next query reports the outage.
  pool.on('error', () => {});
  return {
    dialect: new PostgresDialect({ pool }),
    // Identity columns are sequences: ids are never reused, even after a rollback or a delete.
    flavour: { generatedIntegerKey: (column) => column.generatedByDefaultAsIdentity() },
    isUnavailable: (error) => {
      const code = errorCode(error);
      return POSTGRES_OUTAGE.test(code) || NETWORK_OUTAGE.test(code) || isClosed(error);
    },
    // Each statement commits on its own unless the unit must be atomic: a transaction would add two round
    // trips. Concurrent commits on the pool's connections share WAL flushes in the server itself.
    writer: (db) => (work, options) => (options?.atomic ? db.transaction().execute(work) : work(db)),
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

/** Opens the database named by the configuration and brings its schema up to date. */
export async function openDatabase(config: DatabaseConfig): Promise<Database> {
  const support = config.kind === 'sqlite' ? sqlite(config.filename) : postgres(config.url, config.poolSize);
  const db = new Kysely<Tables>({ dialect: support.dialect });
  try {
    const migrationTableSchema = await support.migrationSchema(db);
    const provider = migrationProvider(support.flavour);
    const { error } = await new Migrator({ db, provider, ...(migrationTableSchema ? { migrationTableSchema } : {}) }).migrateToLatest();
    if (error) throw error;
  } catch (error) {
    await db.destroy();
    throw new Error(`Could not prepare the database: ${(error as Error).message}`, { cause: error });
  }
  return { kind: config.kind, db, write: support.writer(db), isUnavailable: support.isUnavailable, close: () => db.destroy() };
}
