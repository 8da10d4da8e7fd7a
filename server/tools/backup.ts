import '../startup/supported-node.js';
import '../startup/settings-file.js';
import { ConfigError, loadStoreConfig } from '../config.js';
import { backupSqlite, BackupFailure } from '../db/sqlite/backup.js';
import { restoreSqlite } from '../db/sqlite/restore.js';

// `npm run backup -- <file>`: an online, consistent copy of the SQLite store DATABASE_URL names, taken while
// the service runs. `npm run restore -- <file> [--next-id=N]`: puts such a copy back, with the service
// stopped; `--next-id` sets the least id the store hands out next, for a store that was lost with the ids it
// handed out after the backup. Both print one line of JSON (what the copy holds) and exit 0, or one line of
// why not and exit 1. PostgreSQL stores are backed up with pg_dump and restored with pg_restore
// (docs/deployment.md).

const [command, file, ...options] = process.argv.slice(2);
try {
  const { database } = loadStoreConfig(process.env);
  if (file === undefined || file === '' || file.startsWith('--')) throw new BackupFailure(`name the backup file: npm run ${command} -- <file>`);
  if (database.kind !== 'sqlite')
    throw new BackupFailure('DATABASE_URL names PostgreSQL: back it up with pg_dump -Fc and restore it with pg_restore (docs/deployment.md)');
  if (database.filename === ':memory:') throw new BackupFailure('DATABASE_URL names an in-memory store, which no other process can read');
  let nextId = 1;
  for (const option of options) {
    const given = command === 'restore' ? /^--next-id=(\d{1,15})$/.exec(option) : null;
    if (!given || Number(given[1]) < 1)
      throw new BackupFailure(`${option} is not an option of ${command}${command === 'restore' ? ' (it takes --next-id=N, N a whole number from 1)' : ''}`);
    nextId = Number(given[1]);
  }
  const summary = command === 'restore' ? await restoreSqlite(file, database.filename, nextId) : backupSqlite(database.filename, file);
  console.log(JSON.stringify({ [command === 'restore' ? 'restored' : 'backup']: file, store: database.filename, ...summary }));
} catch (error) {
  if (!(error instanceof BackupFailure || error instanceof ConfigError)) throw error;
  console.error(error instanceof BackupFailure ? `Could not ${command === 'restore' ? 'restore' : 'back up'}: ${error.message}` : error.message);
  process.exit(1);
}
