import type SqliteDatabase from 'better-sqlite3';
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  type SqliteDatabase as PreparingDatabase,
  type SqliteDialectConfig,
} from 'kysely';

/**
 * Several processes may share one SQLite file (WORKERS, or instances started at once). In WAL mode a
 * transaction that starts as a reader cannot become a writer once another process has written: SQLite
 * answers SQLITE_BUSY at once instead of waiting. `BEGIN IMMEDIATE` takes the write lock first, so
 * busy_timeout applies and the transaction sees the latest data (https://www.sqlite.org/lang_transaction.html).
 */
class ImmediateSqliteDriver extends SqliteDriver {
  constructor(
    settings: SqliteDialectConfig,
    private readonly raw: SqliteDatabase.Database,
  ) {
    super(settings);
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  /**
   * After SQLITE_FULL, IOERR, BUSY or NOMEM SQLite may have rolled the whole transaction back itself
   * ("Response To Errors Within A Transaction", https://www.sqlite.org/lang_transaction.html). A ROLLBACK
   * then fails with "cannot rollback - no transaction is active", and Kysely would throw that error instead
   * of the outage that caused it: a full disk would become a 500. There is nothing left to roll back.
   */
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (this.raw.inTransaction) await super.rollbackTransaction(connection);
  }
}

/** Kysely runs SQLite migrations outside a transaction; SQLite has transactional DDL, so use it. */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

/** SQLite for several processes on one file, with transactional migrations and a rollback that keeps the cause. */
export class MultiProcessSqliteDialect extends SqliteDialect {
  constructor(
    private readonly settings: SqliteDialectConfig,
    private readonly raw: SqliteDatabase.Database,
  ) {
    super(settings);
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.settings, this.raw);
  }

  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}

/** Prepared statements kept per SQL text; Kysely's driver would prepare every statement anew on each query. */
const STATEMENT_CACHE_SIZE = 256;

/**
 * better-sqlite3 wrapped so that `prepare` returns a cached statement for SQL it has seen: preparing it again
 * for every query would be a share of every GET's CPU time. The SQL texts are few (values are parameters); the
 * cache is bounded anyway, dropping the oldest statement first.
 */
export function withStatementCache(database: SqliteDatabase.Database): PreparingDatabase {
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
  } as PreparingDatabase;
}
