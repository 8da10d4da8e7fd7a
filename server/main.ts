import cluster from 'node:cluster';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger, type Logger } from './logger.js';
import { prepareStore, startServer } from './server.js';

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
  const handle = (signal: NodeJS.Signals) => {
    logger.info({ signal }, 'shutting down');
    stop(signal).then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', handle);
  process.once('SIGINT', handle);
}

/** One server in this process (also what each cluster worker runs). */
async function runServer(config: Config, logger: Logger): Promise<void> {
  const server = await startServer(config, logger);
  logger.info({ url: server.url, database: config.database.kind }, 'user records service listening');
  onSignals(() => server.close(), logger);
}

/** The cluster primary: prepares the store once, then keeps `workers` server processes running. */
async function runPrimary(config: Config, logger: Logger): Promise<void> {
  await prepareStore(config, logger);
  let stopping = false;
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    logger.error({ pid: worker.process.pid, code, signal }, 'worker died; starting another');
    cluster.fork();
  });
  for (let i = 0; i < config.workers; i++) cluster.fork();
  onSignals(async (signal) => {
    stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((worker) => worker !== undefined);
    await Promise.all(
      workers.map((worker) => new Promise<void>((resolve) => {
        worker.once('exit', () => resolve());
        worker.process.kill(signal);
      })),
    );
  }, logger);
}

const config = readConfig();
const logger = createLogger(config.logLevel);
const run = config.workers > 1 && cluster.isPrimary ? runPrimary : runServer;
run(config, logger).catch((error: unknown) => {
  logger.fatal({ err: error }, 'could not start');
  process.exit(1);
});
