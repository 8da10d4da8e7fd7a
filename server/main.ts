import './startup/supported-node.js';
import './startup/settings-file.js';
import cluster from 'node:cluster';
import { ConfigError, loadConfig, type Config } from './config.js';
import { serveClusterPlaces } from './http/limits/connection-places.js';
import { serveClusterLimits } from './http/limits/limiter-store.js';
import { serveClusterMetrics } from './http/observability/cluster-metrics.js';
import { createLogger, type Logger } from './logger.js';
import { prepareStore, startServer } from './server.js';
import { startFailureLine } from './startup/start-failure.js';

// Entry point of `npm start`: the only place that reads process.env.

function readConfig(): Config {
  try {
    return loadConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
}

function onSignals(stop: (signal: NodeJS.Signals) => Promise<void>, logger: Logger): void {
  let stopping = false;
  // Further signals while stopping are ignored: Ctrl-C in a terminal reaches the workers twice (from the
  // terminal and from the primary), and the second must not cut the requests the first lets finish.
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    stop(signal).then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
}

/** The loopback address of each address that means every address. */
const LOOPBACK_OF: Record<string, string> = { '0.0.0.0': '127.0.0.1', '[::]': '[::1]' };

/** One server in this process (also what each cluster worker runs). */
async function runServer(config: Config, logger: Logger): Promise<void> {
  const server = await startServer(config, logger, { writerThread: true });
  const mode = config.sandbox ? { sandbox: true } : {};
  // The reference page first: where a newcomer goes next (README's quick start), at an address a browser on
  // this machine can open, which 0.0.0.0 and :: (every address) are not.
  const [, every] = /^http:\/\/(0\.0\.0\.0|\[::\]):/.exec(server.url) ?? [];
  const docs = `${every ? server.url.replace(every, LOOPBACK_OF[every]!) : server.url}/docs`;
  logger.info({ url: server.url, docs, database: config.database.kind, ...mode }, 'user records service listening');
  onSignals(() => server.close(), logger);
}

/** The cluster primary: prepares the store once, then keeps `workers` server processes running. */
async function runPrimary(config: Config, logger: Logger): Promise<void> {
  const store = await prepareStore(config, logger);
  // Workers without Redis or a shared store count their clients here (limiter-store.ts).
  serveClusterLimits();
  // And their connections, for MAX_CONNECTIONS_PER_CLIENT (none counted behind trusted proxies).
  serveClusterPlaces(config.trustProxy > 0 ? 0 : config.maxConnectionsPerClient);
  let stopping = false;
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    logger.error({ workerPid: worker.process.pid, code, signal }, 'worker died; starting another');
    cluster.fork();
  });
  serveClusterMetrics(logger);
  for (let i = 0; i < config.workers; i++) cluster.fork();
  onSignals(async (signal) => {
    stopping = true;
    await stopWorkers(signal, config.timeouts.shutdownMs + WORKER_EXIT_GRACE_MS, logger);
    // Last: workers finishing their requests still write through the primary on SQLite.
    await store.close();
  }, logger);
}

/** How long past SHUTDOWN_TIMEOUT_MS a worker may take to close its store and exit before it is killed. */
const WORKER_EXIT_GRACE_MS = 5000;

/** Passes the signal on to every worker and waits for all to exit; one still running at the deadline is killed. */
async function stopWorkers(signal: NodeJS.Signals, deadlineMs: number, logger: Logger): Promise<void> {
  const workers = Object.values(cluster.workers ?? {}).filter((worker) => worker !== undefined);
  const deadline = setTimeout(() => {
    for (const worker of workers.filter((w) => !w.isDead())) {
      logger.error({ workerPid: worker.process.pid }, 'worker did not stop in time; killing it');
      worker.process.kill('SIGKILL');
    }
  }, deadlineMs);
  await Promise.all(
    workers.map(
      (worker) =>
        new Promise<void>((resolve) => {
          if (worker.isDead()) return resolve();
          worker.once('exit', () => resolve());
          worker.process.kill(signal);
        }),
    ),
  );
  clearTimeout(deadline);
}

const config = readConfig();
const logger = createLogger(config.logLevel);
const run = config.workers > 1 && cluster.isPrimary ? runPrimary : runServer;
run(config, logger).catch((error: unknown) => {
  // One line a person can act on, as for a configuration error; a failure the service cannot explain keeps
  // its stack in the log.
  const line = startFailureLine(error, config);
  if (line !== undefined) console.error(line);
  else logger.fatal({ err: error }, 'could not start');
  process.exit(1);
});
