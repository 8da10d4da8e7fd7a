import SqliteDatabase from 'better-sqlite3';
import type { CompiledQuery } from 'kysely';
import type { StoreTimeouts } from '../../config.js';
import type { Keyed, SqliteReader } from '../dialect-support.js';
import { withStatementCache } from './dialect.js';

/** Answers of the SQLite reader cached until the store changes: at most this many, each of at most MAX_CACHED_ROWS rows. */
const MAX_CACHED_ANSWERS = 256;
const MAX_CACHED_ROWS = 100;

/**
 * A read-only connection to an SQLite file, with its statements prepared once. Through Kysely a select by id
 * takes a mutex, a connection and five awaits around the few microseconds SQLite spends on it, and waits
 * behind any write's transaction on the one connection writes share.
 *
 * It caches its answers until the store changes: a page read again costs SQLite far more than the check that
 * nothing changed, SQLite's data_version, which sees any committed write at once.
 */
export function sqliteReader(filename: string, timeouts: StoreTimeouts, cacheKib: number): SqliteReader {
  const database = new SqliteDatabase(filename, { readonly: true, fileMustExist: true });
  database.pragma(`busy_timeout = ${timeouts.statementMs}`);
  // Searches read here: as many of the file's pages held in memory as the connection that writes holds.
  database.pragma(`cache_size = -${cacheKib}`);
  const statements = withStatementCache(database);
  // Changes whenever another connection commits, this process's writer or another process's
  // (https://www.sqlite.org/pragma.html#pragma_data_version): read before each select, it says whether the
  // answers cached since are still the store's.
  const dataVersion = database.prepare('pragma data_version').pluck();
  const storeVersion = () => dataVersion.get() as number;
  let version: unknown;
  const answers = new Map<string, readonly unknown[]>();
  const readUncached = <Row>({ sql: text, parameters }: CompiledQuery<Row>): Row[] => statements.prepare(text).all(parameters) as Row[];
  return {
    readCached: <Row>(query: CompiledQuery<Row> | Keyed<Row>): Row[] => {
      const now = storeVersion();
      if (now !== version) {
        answers.clear();
        version = now;
      }
      const key = 'key' in query ? query.key : `${query.sql}\u0000${JSON.stringify(query.parameters)}`;
      let rows = answers.get(key) as readonly Row[] | undefined;
      if (rows === undefined) {
        rows = readUncached('key' in query ? query.compile() : query);
        if (rows.length <= MAX_CACHED_ROWS) {
          for (const row of rows) Object.freeze(row);
          answers.set(key, rows);
          if (answers.size > MAX_CACHED_ANSWERS) answers.delete(answers.keys().next().value!);
        }
      }
      // A copy: callers may consume the array (a list's slices are popped as they are sent).
      return rows.slice();
    },
    readUncached,
    storeVersion,
    close: () => database.close(),
  };
}
