import SqliteDatabase from 'better-sqlite3';
import type { CompiledQuery } from 'kysely';
import type { StoreTimeouts } from '../../config.js';
import type { SqliteReader } from '../dialect-support.js';
import { withStatementCache } from './dialect.js';

/**
 * A read-only connection to an SQLite file, with its statements prepared once. Through Kysely a select by id
 * takes a mutex, a connection and five awaits around the few microseconds SQLite spends on it, and waits
 * behind any write's transaction on the one connection writes share. It keeps no answers: whole replies are
 * cached (server/http/reply-cache/), over the store's version it reads.
 */
export function sqliteReader(filename: string, timeouts: StoreTimeouts, cacheKib: number): SqliteReader {
  const database = new SqliteDatabase(filename, { readonly: true, fileMustExist: true });
  database.pragma(`busy_timeout = ${timeouts.statementMs}`);
  // Searches read here: as many of the file's pages held in memory as the connection that writes holds.
  database.pragma(`cache_size = -${cacheKib}`);
  const statements = withStatementCache(database);
  // Changes whenever another connection commits, this process's writer or another process's
  // (https://www.sqlite.org/pragma.html#pragma_data_version): it says whether the replies cached since are
  // still the store's.
  const dataVersion = database.prepare('pragma data_version').pluck();
  return {
    read: <Row>({ sql: text, parameters }: CompiledQuery<Row>): Row[] => statements.prepare(text).all(parameters) as Row[],
    storeVersion: () => dataVersion.get() as number,
    close: () => database.close(),
  };
}
