import { createRequire } from 'node:module';
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';
import type { StoreTimeouts } from '../../config.js';
import type { PoolMode } from '../../config-settings.js';
import { postgresOutage } from '../outage.js';

/** What the pool reports: a connection that failed, once per connection, with its outage code. */
export type ConnectionFault = (fault: { readonly code: string; readonly message: string }) => void;

/**
 * Errors of statements that went to the server and got no answer (lost on the way, or past the client's
 * timeout): the server may have carried them out, a COMMIT included. An error the server itself answered (it
 * carries a severity) means the statement failed there.
 */
const unanswered = new WeakSet<object>();

/** Whether a statement failed with no answer from the server, which may have carried it out (see `unanswered`). */
export const wentUnanswered = (error: unknown): boolean => typeof error === 'object' && error !== null && unanswered.has(error);

/** Names the service's sessions in pg_stat_activity, unless DATABASE_URL names them otherwise. */
export const APPLICATION_NAME = 'user-records';

/**
 * How much longer than statement_timeout the client waits for an answer. A live server cancels the statement
 * itself (57014) and the connection stays usable; only a dead or blackholed network reaches the client's bound,
 * which server-side timeouts cannot see (https://node-postgres.com/apis/client: query_timeout).
 */
export const NETWORK_GRACE_MS = 1000;

/**
 * The session settings the service's statements run under. With its own sessions they are startup parameters,
 * sent once per connection. A pooler in transaction mode (PgBouncer) refuses those (`unsupported startup
 * parameter`), and a session SET there would leak to whichever client gets that server connection next: they
 * are set with SET LOCAL in each transaction instead, and end with it.
 */
function sessionSettings(timeouts: StoreTimeouts) {
  return {
    statement_timeout: timeouts.statementMs,
    // A transaction left open by a vanished client must not hold its locks for long.
    idle_in_transaction_session_timeout: timeouts.statementMs,
  };
}

/**
 * The startup parameter a pooler refused ("unsupported startup parameter: statement_timeout", as PgBouncer in
 * transaction mode answers a connection of the `session` pool mode), anywhere in the error's causes.
 */
export function refusedStartupParameter(error: unknown): string | undefined {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    const refused = /unsupported startup parameter: (\w+)/.exec(cause.message)?.[1];
    if (refused) return refused;
  }
  return undefined;
}

function poolOptions(url: string, size: number, timeouts: StoreTimeouts, mode: PoolMode): pg.PoolConfig {
  return {
    connectionString: url,
    max: size,
    application_name: APPLICATION_NAME,
    // Bounds both opening a connection and waiting for a free one.
    connectionTimeoutMillis: timeouts.connectMs,
    idleTimeoutMillis: timeouts.idleMs,
    ...(mode === 'session' ? sessionSettings(timeouts) : {}),
    query_timeout: timeouts.statementMs + NETWORK_GRACE_MS,
    // Node 20 (libuv 1.46) sets TCP_KEEPIDLE to this delay, then probes every second, 10 times (seen with
    // strace): a peer gone without a word is noticed about 10 s after the delay, even on an idle connection.
    // A blackhole that still answers TCP (a proxy) passes them; there the query timeout bounds a request.
    keepAlive: timeouts.keepAliveMs > 0,
    keepAliveInitialDelayMillis: timeouts.keepAliveMs,
  };
}

/**
 * pg, loaded when a pool is first made: a service on SQLite never loads it, nor the memory it takes (ioredis
 * likewise, loaded only for REDIS_URL). A CommonJS package, so it loads synchronously.
 */
const loadPg = (): typeof pg => createRequire(import.meta.url)('pg') as typeof pg;

/**
 * A pg pool that survives its connections failing, as Kysely's PostgresDialect uses it.
 *
 * - pg.Pool listens for errors only on idle clients: a checked-out client whose server goes away (57P01,
 *   ECONNRESET) emits 'error' with nobody listening, and the process dies. Every client gets a listener of
 *   its own for its whole life.
 * - Kysely releases every client with `release()`, as if healthy. A client whose query failed with an outage
 *   (timed out on the client side, killed, reset) may still wait for an answer that will never come; back in
 *   the pool it would wedge every request that gets it. Such a client is released with its error, which
 *   makes the pool destroy it and open a fresh connection when one is needed: the pool heals by itself.
 *   Until then its later queries (Kysely's ROLLBACK) fail at once with the same error.
 *
 * `settings` are further settings of this pool's sessions (a SET on each new connection; in transaction mode,
 * SET LOCAL in each transaction as the timeouts are).
 */
export function createPostgresPool(
  url: string,
  size: number,
  timeouts: StoreTimeouts,
  onFault: ConnectionFault,
  mode: PoolMode = 'session',
  settings: Readonly<Record<string, string>> = {},
): WatchedPool {
  const pool = new (loadPg().Pool)(poolOptions(url, size, timeouts, mode));
  const setLocal = Object.entries({ ...sessionSettings(timeouts), ...settings })
    .map(([name, value]) => `set local ${name} = ${value}`)
    .join('; ');
  const setSession = Object.entries(settings)
    .map(([name, value]) => `set ${name} = ${value}`)
    .join('; ');
  const reported = new WeakSet<pg.Client>();
  const report = (client: pg.Client, error: unknown) => {
    if (reported.has(client)) return;
    reported.add(client);
    onFault({ code: postgresOutage(error) ?? 'UNKNOWN', message: (error as Error).message });
  };
  pool.on('connect', (client) => {
    client.on('error', (error) => report(client, error));
    // Queued before anything the pool hands the connection to: a client runs its queries in order. A
    // connection that fails it fails its next statement too, which reports it.
    if (mode === 'session' && setSession !== '') client.query(setSession).catch(() => {});
  });
  // The idle client's error has been reported by its own listener above; the pool has removed the client.
  pool.on('error', () => {});

  function watched(client: pg.PoolClient) {
    let failure: Error | undefined;
    const query = async (text: string | pg.QueryConfig, parameters?: readonly unknown[]) => {
      // The connection is broken: a ROLLBACK after a timed-out query would wait out a timeout of its own.
      if (failure) throw failure;
      try {
        return await client.query(text as string, parameters as unknown[] | undefined);
      } catch (error) {
        if (postgresOutage(error) !== undefined) {
          failure = error as Error;
          report(client, error);
          if (typeof (error as { severity?: unknown }).severity !== 'string') unanswered.add(error as Error);
        }
        throw error;
      }
    };
    // Only the (sql, parameters) and (config) forms of query: the service never asks Kysely for a cursor.
    return { query: mode === 'session' ? query : inTransactions(query), release: () => client.release(failure) };
  }

  /**
   * Transaction mode: every statement runs in a transaction that begins with the session settings (SET
   * LOCAL): Kysely's own transactions get them right after their BEGIN (one round trip: BEGIN and the SETs
   * go as one simple query); a statement on its own is wrapped in one (two round trips more). Statements
   * prepared by name (rate-limiter-flexible's) go unnamed: a named one lives in one server session, which
   * another client may get next ("prepared statement already exists").
   */
  function inTransactions(query: (text: string | pg.QueryConfig, parameters?: readonly unknown[]) => Promise<pg.QueryResult>) {
    let open = false;
    return async (given: string | pg.QueryConfig, parameters?: readonly unknown[]) => {
      const unnamed = typeof given === 'string' ? given : { ...given, name: undefined };
      const text = typeof given === 'string' ? given : given.text;
      if (/^\s*(begin|start\s+transaction)\b/i.test(text)) {
        const result = await query(`${text}; ${setLocal}`);
        open = true;
        return Array.isArray(result) ? result[0] : result;
      }
      if (/^\s*(commit|end|rollback|abort)\s*$/i.test(text)) {
        open = false;
        return query(unnamed, parameters);
      }
      if (open) return query(unnamed, parameters);
      await query(`begin; ${setLocal}`);
      try {
        const result = await query(unnamed, parameters);
        await query('commit');
        return result;
      } catch (error) {
        await query('rollback').catch(() => undefined);
        throw error;
      }
    };
  }

  return {
    connect: async () => watched(await pool.connect()) as unknown as PostgresPoolClient,
    end: () => pool.end(),
    // The connection settings, which Kysely reads for a control connection (none is made: the service never
    // cancels a query through Kysely).
    options: pool.options,
    // One statement on a watched connection, for callers outside Kysely (the shared rate-limit counts).
    async query(config: pg.QueryConfig) {
      const client = watched(await pool.connect());
      try {
        return await client.query(config);
      } finally {
        client.release();
      }
    },
  };
}

/** The pool createPostgresPool returns: Kysely's interface, and single statements for other callers. */
export type WatchedPool = PostgresPool & { query(config: pg.QueryConfig): Promise<unknown> };
