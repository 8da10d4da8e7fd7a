import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config.js';
import { openDatabase, type Database } from './db/database.js';
import { seedDemoData } from './db/demo-data.js';
import { createUserRepository } from './db/user.repository.js';
import { createUserService } from './domain/user.service.js';
import { createHandlers } from './handlers/index.js';
import { createApp } from './http/app.js';
import { loadContract } from './http/contract/contract.js';
import { createMetrics } from './http/observability/metrics.js';
import { answerClientError, MAX_HEADER_BYTES, refuseExpectation, refuseTunnel } from './http/protocol/raw-answers.js';
import { createLogger, type Logger } from './logger.js';

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

async function openPreparedDatabase(config: Config, logger: Logger): Promise<Database> {
  const database = await openDatabase(config.database);
  try {
    if (config.seedDemoData && (await seedDemoData(database.db, new Date().toISOString()))) {
      logger.info('seeded the empty store with 12 demo users');
    }
    return database;
  } catch (error) {
    await database.close();
    throw error;
  }
}

/** Migrates (and seeds) the store once, so that worker processes starting together find it ready. */
export async function prepareStore(config: Config, logger: Logger): Promise<void> {
  await (await openPreparedDatabase(config, logger)).close();
}

/** Waits for the open requests to end, cutting the connections that are still busy at the deadline. */
async function drain(http: Server, deadlineMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => http.close(() => resolve()));
  http.closeIdleConnections();
  const deadline = setTimeout(() => http.closeAllConnections(), deadlineMs);
  await closed;
  clearTimeout(deadline);
}

/** Opens the store, wires the layers together and starts listening. */
export async function startServer(config: Config, logger: Logger = createLogger(config.logLevel)): Promise<RunningServer> {
  const contract = loadContract();
  const database = await openPreparedDatabase(config, logger);
  try {
    const users = createUserService(createUserRepository(database));
    const metrics = createMetrics();
    const handlers = createHandlers({ users, basePath: config.basePath, renderMetrics: metrics.render });
    const lifecycle = { closing: false };
    const { timeouts } = config;
    const app = createApp({ config, contract, handlers, logger, metrics, lifecycle });
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
    const port = await listen(http, config.port, config.host);
    const sweep = () => users.sweepExpiredKeys().catch((error: unknown) => logger.warn({ err: error }, 'could not sweep idempotency keys'));
    void sweep();
    const sweeper = setInterval(sweep, KEY_SWEEP_INTERVAL_MS).unref();
    const close = async () => {
      lifecycle.closing = true;
      clearInterval(sweeper);
      await drain(http, timeouts.shutdownMs);
      await database.close();
    };
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    return { url: `http://${host}:${port}${config.basePath}`, port, database, logger, close };
  } catch (error) {
    await database.close();
    throw error;
  }
}
