import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { startServer } from './server.js';

/** Entry point of `npm start`: the only place that reads process.env. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
  const logger = createLogger(config.logLevel);
  const server = await startServer(config, logger);
  logger.info({ url: server.url, database: config.database.kind }, 'user records service listening');
  const stop = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
