import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../config.js';
import { SchemaMismatch } from '../db/migrate.js';
import { refusedStartupParameter } from '../db/postgres/pool.js';
import { UnfinishedRestore } from '../db/sqlite/restore-marker.js';
import type { Logger } from '../logger.js';

// What stops the service from starting, said in one line a person can act on: the setting to change, or what
// to check. Failures the service cannot name (bugs) keep their stack, in the log.

/** A failure to start that the service can explain; its message is the line to show. */
export class StartFailure extends Error {
  override readonly name = 'StartFailure';
}

/** The line for a failure to listen, by its system error code; undefined for others. */
function listenFailure(error: unknown, config: Pick<Config, 'port' | 'host'>): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const where = `port ${config.port} on ${config.host}`;
  switch (code) {
    case 'EADDRINUSE':
      return `Could not start: ${where} is in use. Set PORT to a free port (make run PORT=3001), or stop what listens there.`;
    case 'EACCES':
      return `Could not start: ${where} needs privileges this process does not have. Set PORT to 1024 or above.`;
    case 'EADDRNOTAVAIL':
      return `Could not start: ${config.host} is not an address of this machine. Set HOST to one of its addresses (0.0.0.0 for all).`;
    default:
      return undefined;
  }
}

/**
 * The line for a pooler that refuses a startup parameter: the service's own session settings (set
 * DATABASE_POOL_MODE=transaction), or the `options` DATABASE_URL carries, which no setting of the service sends.
 */
function poolerFailure(error: unknown): string | undefined {
  const parameter = refusedStartupParameter(error);
  if (parameter === undefined) return undefined;
  const refused = `Could not start: the database refused the startup parameter ${parameter}, as a pooler in transaction mode (PgBouncer) does.`;
  return parameter === 'options'
    ? `${refused} DATABASE_URL sends it (?options=): remove it, and give the role its search_path instead (ALTER ROLE … SET search_path = …).`
    : `${refused} Set DATABASE_POOL_MODE=transaction, or connect to PostgreSQL itself.`;
}

/** PostgreSQL's codes for a database or role that does not exist, or credentials it refuses. */
const REFUSED_DATABASE_OR_ROLE = new Set(['3D000', '28000', '28P01']);

/** The line for a PostgreSQL server that has no such database or role, or refuses the credentials: its own words, once. */
function postgresRefusal(error: unknown): string | undefined {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && REFUSED_DATABASE_OR_ROLE.has(code))
      return `Could not start: the database server says ${cause.message}. Fix DATABASE_URL, or create what it names on that server.`;
  }
  return undefined;
}

/** The line for a failure to open or prepare the store, or undefined when the service cannot explain it. */
export function storeFailureLine(error: unknown): string | undefined {
  if (error instanceof StartFailure || error instanceof SchemaMismatch || error instanceof UnfinishedRestore) return error.message;
  return poolerFailure(error) ?? postgresRefusal(error);
}

/** The line to show for a failure to start, or undefined when the service cannot explain it (a bug: keep the stack). */
export function startFailureLine(error: unknown, config: Pick<Config, 'port' | 'host'>): string | undefined {
  return storeFailureLine(error) ?? listenFailure(error, config);
}

/** Waits between tries to open a store that does not answer yet: 0.5 s, doubling, at most 5 s. */
const FIRST_WAIT_MS = 500;
const LONGEST_WAIT_MS = 5000;

/**
 * Opens the store, trying again while it does not answer yet (PostgreSQL starting, restarting or not
 * reachable; SQLite locked by another process), for at most `timeoutMs`: services started together (a
 * compose file, a reboot) reach the database in any order. Each try that fails says so in one line, with
 * when the next comes; past the time, a StartFailure names what to check. An error that is not an outage
 * (a bug, a migration that fails) is thrown at once.
 */
export async function openWhenAnswering<T>(
  open: () => Promise<T>,
  outage: (error: unknown) => string | undefined,
  timeoutMs: number,
  logger: Logger,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 1, waitMs = FIRST_WAIT_MS; ; attempt++, waitMs = Math.min(2 * waitMs, LONGEST_WAIT_MS)) {
    try {
      return await open();
    } catch (error) {
      const code = outage(error);
      if (code === undefined) throw error;
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
      const why = `${code}: ${(cause as Error).message}`;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new StartFailure(
          `Could not start: the store did not answer within ${Math.round(timeoutMs / 1000)} s (${why}). Check DATABASE_URL and that the database runs, or wait longer with DATABASE_START_TIMEOUT_MS.`,
          { cause: error },
        );
      }
      const retryInMs = Math.min(waitMs, left);
      logger.warn({ code, attempt, retryInMs, message: (cause as Error).message }, 'the store does not answer yet; trying again');
      await sleep(retryInMs);
    }
  }
}
