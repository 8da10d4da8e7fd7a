import '../startup/supported-node.js';
import '../startup/settings-file.js';
import { ConfigError, loadStoreConfig } from '../config.js';
import { MIGRATION_NAMES } from '../db/migrations/index.js';
import { openDatabase, openingOutage } from '../db/database.js';
import { createLogger } from '../logger.js';
import { migrationLog } from '../startup/migration-log.js';
import { openWhenAnswering, storeFailureLine } from '../startup/start-failure.js';

// `npm run migrate`: brings the schema of the store DATABASE_URL names up to date with this version's
// migrations, once, and exits; instances started with MIGRATE_AT_START=false then only check it. Reads the
// store's settings alone (no credentials). Waits for the database as a start does (DATABASE_START_TIMEOUT_MS);
// exits 1 with one line when it cannot: the database does not answer, a migration fails, or the schema is
// newer than this version.

let config: ReturnType<typeof loadStoreConfig>;
try {
  config = loadStoreConfig(process.env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(1);
}
const logger = createLogger(config.logLevel);
try {
  const database = await openWhenAnswering(
    () => openDatabase(config.database, { timeouts: config.storeTimeouts, migrations: 'apply', onMigrated: migrationLog(logger) }),
    (error) => openingOutage(config.database, error),
    config.databaseStartTimeoutMs,
    logger,
  );
  await database.close();
  logger.info({ migrations: MIGRATION_NAMES.length, latest: MIGRATION_NAMES.at(-1) }, "the store's schema is up to date");
} catch (error) {
  const line = storeFailureLine(error);
  if (line !== undefined) console.error(line.replace(/^Could not start: /, 'Could not migrate: '));
  else logger.fatal({ err: error }, 'could not migrate');
  process.exit(1);
}
