import cluster from 'node:cluster';
import { createServer, type Server } from 'node:http';
import type Koa from 'koa';
import type { AddressInfo } from 'node:net';
import type { Config } from './config.js';
import { openDatabase, openingOutage, type Database } from './db/database.js';
import { restoreDemoData, seedDemoData } from './db/demo-data.js';
import type { ConnectionFault } from './db/postgres/pool.js';
import { serveStoreWrites, writesThroughPrimary, writesThroughThread, type StoppableRepository } from './db/sqlite/store-writer.js';
import { createUserRepository } from './db/sql-user-repository.js';
import { createUserService, type UserService } from './domain/user.service.js';
import { createHandlers } from './handlers/index.js';
import { createApp } from './http/app.js';
import { loadContract } from './http/contract/ajv-contract.js';
import type { Contract } from './http/contract/contract.js';
import { createServerMetrics } from './http/observability/cluster-metrics.js';
import type { Metrics } from './http/observability/metrics.js';
import { createReplyCache } from './http/reply-cache/reply-cache.js';
import { limitConnections } from './http/limits/connection-limits.js';
import { clusterPlaces, localPlaces } from './http/limits/connection-places.js';
import { createLimitReport } from './http/limits/limit-report.js';
import { createLimiters } from './http/limits/limiter-store.js';
import { answerClientError, MAX_HEADER_BYTES, refuseExpectation, refuseTunnel } from './http/protocol/raw-answers.js';
import { createLogger, type Logger } from './logger.js';
import { migrationLog } from './startup/migration-log.js';
import { openWhenAnswering } from './startup/start-failure.js';
import { readUsersFile } from './startup/users-file.js';
import { DEMO_USERS } from './domain/demo-users.js';
import type { UserFields } from './domain/user.js';
import { createTracing, type Tracing } from './tracing.js';

/** How often expired idempotency keys are deleted. */
const KEY_SWEEP_INTERVAL_MS = 60 * 60 * 1000;

/** A server that is listening, and the way to stop it. */
export interface RunningServer {
  /** Base URL including BASE_PATH, e.g. `http://127.0.0.1:3000`. */
  readonly url: string;
  readonly port: number;
  readonly database: Database;
  readonly logger: Logger;
  /** Stops accepting, lets requests in flight finish (up to SHUTDOWN_TIMEOUT_MS), then closes the store. */
  close(): Promise<void>;
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

/** Store connection faults are not tied to a request: each is logged (once per connection) and counted here. */
function connectionFaults(logger: Logger, metrics?: Metrics): ConnectionFault {
  return ({ code, message }) => {
    logger.warn({ code, message }, 'store connection failed; it is discarded and replaced when needed');
    metrics?.storeConnectionFault(code);
  };
}

/** The users a new store starts with, and a sandbox reset restores: USERS_FILE's, checked, or the demo users. */
const firstUsers = (config: Config, contract: () => Contract): readonly UserFields[] =>
  config.usersFile === undefined ? DEMO_USERS : readUsersFile(config.usersFile, contract());

/** Opens and migrates the store, and seeds `users` into it if it is new. */
async function openPreparedDatabase(config: Config, logger: Logger, users: readonly UserFields[], metrics?: Metrics, tracing?: Tracing): Promise<Database> {
  const onQuery = tracing?.onQuery;
  const database = await openWhenAnswering(
    () =>
      openDatabase(config.database, {
        timeouts: config.storeTimeouts,
        onConnectionFault: connectionFaults(logger, metrics),
        ...(onQuery ? { onQuery } : {}),
        migrations: config.migrateAtStart ? 'apply' : 'check',
        onMigrated: migrationLog(logger),
      }),
    (error) => openingOutage(config.database, error),
    config.databaseStartTimeoutMs,
    logger,
  );
  try {
    if (!database.searchIndex && !cluster.isWorker) {
      logger.warn('the database has no substring index (PostgreSQL without pg_trgm): searches examine users one by one; see README, Running on PostgreSQL');
    }
    // A worker finds the store seeded by its primary: one that restarts later must not seed a store emptied on purpose.
    if (config.seedDemoData && !cluster.isWorker) {
      if (await seedDemoData(database.db, new Date().toISOString(), users)) {
        logger.info({ users: users.length, from: config.usersFile ?? 'the demo users' }, `seeded the empty store with ${users.length} users`);
      } else if (config.usersFile !== undefined) {
        logger.warn(
          { usersFile: config.usersFile },
          'USERS_FILE is not used: this store was given its first users before, and a store gets them once in its life. To start from the file, use a new store (another DATABASE_URL, or remove the SQLite file)',
        );
      }
    }
    return database;
  } catch (error) {
    await database.close();
    throw error;
  }
}

/**
 * In the cluster primary: migrates (and seeds) the store once, so that workers starting together find it
 * ready. On SQLite the primary then stays the store's only writer (db/sqlite/store-writer.ts) until closed.
 */
export async function prepareStore(config: Config, logger: Logger): Promise<{ close(): Promise<void> }> {
  await (await openPreparedDatabase(config, logger, firstUsers(config, loadContract))).close();
  if (config.database.kind !== 'sqlite') return { close: async () => undefined };
  return serveStoreWrites({ database: config.database, timeouts: config.storeTimeouts }, logger);
}

/** How the server runs beside its process's other parts. */
export interface StartOptions {
  /**
   * Whether a server alone in its process on an SQLite file runs its writes in a writer thread of its own
   * (main.ts: the service). A thread runs the built module (dist/server/db/sqlite/writer-thread.js); a server started
   * from the sources in a test's process commits on its event loop, as it does with tracing.
   */
  readonly writerThread?: boolean;
}

/**
 * The repository of this process. On an SQLite file its writes go to the store's one writer: with WORKERS,
 * the primary's writer thread; alone, a writer thread of its own, so that no commit's wait for the disk holds
 * the event loop. Writes stay on the loop with tracing (each statement a span of its request), in memory (a
 * thread cannot reach this connection's store) and in the sandbox (its reset writes through this connection).
 */
function userRepository(
  config: Config,
  database: Database,
  { tracing, logger, writerThread }: { tracing: Tracing; logger: Logger; writerThread: boolean },
): StoppableRepository {
  const local = createUserRepository(database, {
    searchQueue: config.searchQueue,
    searchQueuePerClient: config.searchQueuePerClient,
    searchBudgetMs: config.searchBudgetMs,
  });
  const inProcess = { ...local, stop: async () => undefined };
  if (config.database.kind !== 'sqlite') return inProcess;
  if (cluster.isWorker) return writesThroughPrimary(local, config.storeTimeouts.statementMs);
  if (!writerThread || config.database.filename === ':memory:' || tracing.onQuery || config.sandbox) return inProcess;
  return writesThroughThread(local, { database: config.database, timeouts: config.storeTimeouts }, logger);
}

/** Waits for the open requests to end, cutting the connections that are still busy at the deadline. */
async function drain(http: Server, deadlineMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => http.close(() => resolve()));
  http.closeIdleConnections();
  const deadline = setTimeout(() => http.closeAllConnections(), deadlineMs);
  await closed;
  clearTimeout(deadline);
}

/** The node:http server with its timeouts, and the answers it gives before a request reaches Koa. */
function createHttpServer(timeouts: Config['timeouts'], app: Koa): Server {
  const http = createServer(
    {
      requestTimeout: timeouts.requestMs,
      headersTimeout: timeouts.headersMs,
      keepAliveTimeout: timeouts.keepAliveMs,
      maxHeaderSize: MAX_HEADER_BYTES,
      // Checked by requestHygiene, so that the answer is problem+json like every other.
      requireHostHeader: false,
      // How often Node looks for requests past their timeouts (30 s by default, too coarse for slowloris).
      connectionsCheckingInterval: Math.min(1000, timeouts.headersMs),
    },
    app.callback(),
  );
  http.on('clientError', answerClientError);
  http.on('connect', refuseTunnel);
  http.on('checkExpectation', refuseExpectation);
  return http;
}

/** Sweeps expired idempotency keys now and every hour, until stopped (a sweep in progress stops too). */
function startKeySweeper(users: UserService, logger: Logger): { stop(): void } {
  const stopSweeping = new AbortController();
  const sweep = () =>
    users
      .sweepExpiredKeys(stopSweeping.signal)
      .then((swept) => swept > 0 && logger.info({ swept }, 'swept expired idempotency keys'))
      .catch((error: unknown) => logger.warn({ err: error }, 'could not sweep idempotency keys'));
  void sweep();
  const sweeper = setInterval(sweep, KEY_SWEEP_INTERVAL_MS).unref();
  return {
    stop() {
      clearInterval(sweeper);
      stopSweeping.abort();
    },
  };
}

/** Exports of spans that failed (a collector down or refusing): counted each, logged at most once a minute. */
function exportFailures(logger: Logger, metrics: Metrics): (error: unknown) => void {
  let lastLogged = -Infinity;
  return (error) => {
    metrics.tracingExportFailed();
    if (Date.now() - lastLogged < 60_000) return;
    lastLogged = Date.now();
    logger.warn({ err: error }, 'could not export trace spans; they are dropped, requests are not affected');
  };
}

/** Opens the store, wires the layers together and starts listening. */
export async function startServer(
  config: Config,
  logger: Logger = createLogger(config.logLevel),
  { writerThread = false }: StartOptions = {},
): Promise<RunningServer> {
  const contract = loadContract({ sandbox: config.sandbox !== undefined });
  const { metrics, render: renderMetrics, stop: stopSharingMetrics } = createServerMetrics();
  const tracing = await createTracing(config.tracing, config.database.kind, exportFailures(logger, metrics));
  // Checked before the store is opened: a USERS_FILE that does not pass stops the start, whatever the store holds.
  const first = firstUsers(config, () => contract);
  const database = await openPreparedDatabase(config, logger, first, metrics, tracing);
  const limiters = await createLimiters(config, database.sharedCounters, { logger });
  // Stopped if the start fails: a writer thread would keep the process alive.
  let opened: StoppableRepository | undefined;
  try {
    const repository = (opened = userRepository(config, database, { tracing, logger, writerThread }));
    const users = createUserService(repository, {
      idempotencyLockMs: config.idempotencyLockMs,
      keysPerClient: config.idempotencyKeysPerClient,
    });
    const sandbox = config.sandbox ? { restoreDemoData: () => restoreDemoData(database.write, new Date().toISOString(), first) } : undefined;
    const handlers = createHandlers({ users, basePath: config.basePath, renderMetrics, ...(sandbox ? { sandbox } : {}) });
    const lifecycle = { closing: false };
    const { timeouts } = config;
    const limitReport = createLimitReport(logger, metrics);
    const replyCache = database.storeVersion && createReplyCache(database.storeVersion, metrics.replyLookup);
    const app = createApp({ config, contract, handlers, logger, metrics, tracing, lifecycle, limitReport, limiters, replyCache });
    const http = createHttpServer(timeouts, app);
    const limits = {
      maxConnections: config.maxConnections,
      // Behind trusted proxies every socket is a proxy's: the proxies' own per-client limits apply there.
      maxConnectionsPerClient: config.trustProxy > 0 ? 0 : config.maxConnectionsPerClient,
      sendTimeoutMs: timeouts.sendMs,
      // Workers count every client's connections in the cluster primary (connection-places.ts).
      places: config.workers > 1 && cluster.isWorker ? clusterPlaces() : localPlaces(config.maxConnectionsPerClient),
    };
    const connectionLimits = limitConnections(http, limits, { report: limitReport, metrics, logger });
    const port = await listen(http, config.port, config.host);
    const sweeper = startKeySweeper(users, logger);
    const close = async () => {
      lifecycle.closing = true;
      sweeper.stop();
      await drain(http, timeouts.shutdownMs);
      connectionLimits.stop();
      await limiters.close();
      await repository.stop();
      await Promise.all([database.close(), tracing.shutdown()]);
      stopSharingMetrics();
    };
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    return { url: `http://${host}:${port}${config.basePath}`, port, database, logger, close };
  } catch (error) {
    await opened?.stop();
    await limiters.close();
    stopSharingMetrics();
    await Promise.all([database.close(), tracing.shutdown()]);
    throw error;
  }
}
