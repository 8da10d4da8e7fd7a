// Which store errors are outages (the store cannot answer now; 503, retry later) rather than bugs (500).
// One table per dialect, so that every class is named once and unit-tested with real error objects.

/** SQLite result codes (better-sqlite3 `code`, extended codes included) that mean the store cannot serve now. */
const SQLITE_OUTAGE = /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|READONLY|CORRUPT|NOTADB|PROTOCOL|NOMEM)/;

/**
 * PostgreSQL SQLSTATEs (https://www.postgresql.org/docs/current/errcodes-appendix.html): 08 connection
 * exceptions; 53 insufficient resources (disk full, out of memory, too many connections); 57P0x shutdown,
 * crash, "starting up" (57P03) and killed sessions (57P01, pg_terminate_backend); 57014 a statement cancelled
 * by statement_timeout; 55000 "database is not currently accepting connections" (the service's queries use
 * nothing else that raises it); 25006 a write sent to a read-only standby after a failover; 58 system I/O errors.
 */
const POSTGRES_OUTAGE = /^(08|53|57P0|57014$|55000$|25006$|58)/;

/** Socket errors of a connection to a networked store. */
const NETWORK_OUTAGE = /^(ECONNREFUSED|ECONNRESET|ECONNABORTED|ENOTFOUND|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EPIPE|EAI_AGAIN)$/;

/** Errors without a code: pg's lost or timed-out connections, and a store already closed (during shutdown). */
const CODELESS_OUTAGES: readonly (readonly [RegExp, string])[] = [
  [/timeout exceeded when trying to connect|Connection terminated due to connection timeout/i, 'CONNECT_TIMEOUT'],
  [/Connection terminated/i, 'CONNECTION_TERMINATED'],
  [/Query read timeout/i, 'QUERY_TIMEOUT'],
  [/not queryable/i, 'CONNECTION_BROKEN'],
  [/database connection is not open|driver has already been destroyed|Cannot use a pool after calling end/i, 'STORE_CLOSED'],
];

/** Raised by the service's own checks (e.g. readiness on a full disk) with the code the store would give. */
export class StoreFault extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'StoreFault';
  }
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

function codelessOutage(error: unknown): string | undefined {
  // Not `instanceof Error`: a native module's errors may come from another realm.
  const message = (error as { message?: unknown } | null)?.message;
  if (typeof message !== 'string') return undefined;
  return CODELESS_OUTAGES.find(([pattern]) => pattern.test(message))?.[1];
}

/** The outage code of an SQLite error (e.g. `SQLITE_FULL`), or undefined when it is not an outage. */
export function sqliteOutage(error: unknown): string | undefined {
  if (error instanceof StoreFault) return error.code;
  const code = errorCode(error);
  return SQLITE_OUTAGE.test(code) ? code : codelessOutage(error);
}

/** The outage code of a PostgreSQL or socket error (e.g. `57P01`, `ECONNRESET`), or undefined when it is not an outage. */
export function postgresOutage(error: unknown): string | undefined {
  if (error instanceof StoreFault) return error.code;
  const code = errorCode(error);
  return POSTGRES_OUTAGE.test(code) || NETWORK_OUTAGE.test(code) ? code : codelessOutage(error);
}
