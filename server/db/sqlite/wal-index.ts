import { closeSync, openSync, readSync, realpathSync } from 'node:fs';
import { endianness } from 'node:os';
import { StoreFault } from '../outage.js';

// PRAGMA data_version is what SQLite offers to tell whether another connection committed, and it starts and
// ends a read transaction to say so: two fcntl locks, which would be the largest single cost of a reply already made.
// Every commit in WAL mode, by any connection of any process, rewrites the header of the WAL index, the `-shm`
// file SQLite maps into every connection's memory (https://www.sqlite.org/walformat.html#the_wal_index_header):
// it counts the transactions (iChange), the last valid frame (mxFrame) and its checksum. Reading the header's
// bytes is one pread of the page the writer's commit already updated in memory, and takes no lock.
// Measurements: docs/decisions/sqlite-reader-answers.md.

/** The WAL-index header, twice (SQLite writes the second copy, then the first): the bytes compared. */
const HEADERS_BYTES = 96;
/** iVersion, the first field of each copy: the format of the WAL index since SQLite 3.7.0. */
const WAL_INDEX_VERSION = 3007000;
/** isInit, set once a connection has built the index from the WAL. */
const IS_INIT_OFFSET = 12;

export interface WalIndexVersion {
  /** A number that changes whenever a transaction was committed since the last call (and never otherwise). */
  read(): number;
  close(): void;
}

/**
 * The version of a SQLite database in WAL mode, read from its WAL index. Call it once a connection of this
 * process has the database open (the index is built then, and stays while any connection is open). Undefined
 * when the index is not the one SQLite documents (another format, another VFS, a store in memory, a file
 * not in WAL mode): the caller then asks SQLite (PRAGMA data_version).
 *
 * A change of any byte of the two header copies is a new version: a read that meets a commit halfway (the
 * copies are written one after the other) only makes a change seen twice, never one missed. A commit always
 * changes the header (iChange counts transactions; mxFrame and the frame checksum move with every frame), so
 * equal bytes mean that nothing was committed in between.
 */
export function walIndexVersion(databaseFile: string): WalIndexVersion | undefined {
  let fd: number;
  try {
    // SQLite names the index after the database file with symbolic links resolved.
    fd = openSync(`${realpathSync(databaseFile)}-shm`, 'r');
  } catch {
    return undefined;
  }
  const now = Buffer.alloc(HEADERS_BYTES);
  const last = Buffer.alloc(HEADERS_BYTES);
  const readHeaders = () => readSync(fd, now, 0, HEADERS_BYTES, 0) === HEADERS_BYTES;
  const u32 = (offset: number) => (endianness() === 'LE' ? now.readUInt32LE(offset) : now.readUInt32BE(offset));
  const valid = () =>
    readHeaders() && u32(0) === WAL_INDEX_VERSION && u32(48) === WAL_INDEX_VERSION && now[IS_INIT_OFFSET] === 1 && now[48 + IS_INIT_OFFSET] === 1;
  let usable = false;
  try {
    usable = valid();
  } catch {
    // Unreadable: not an index this can read.
  }
  if (!usable) {
    closeSync(fd);
    return undefined;
  }
  now.copy(last);
  let version = 0;
  let open = true;
  return {
    read() {
      // Its descriptor's number may be another file's by now: refused, as SQLite refuses a closed connection.
      if (!open) throw new StoreFault('STORE_CLOSED', 'the WAL index is closed: the database connection is not open');
      let whole: boolean;
      try {
        whole = readHeaders();
      } catch (error) {
        // The store cannot say what it holds: an outage, as SQLite's own read of the index would be.
        throw new StoreFault('SQLITE_IOERR_SHMMAP', `could not read the WAL index: ${(error as Error).message}`);
      }
      // A short read (which an index in use never gives) counts as a change: at worst a reply is made again.
      if (!whole || !now.equals(last)) {
        now.copy(last);
        version++;
      }
      return version;
    },
    close() {
      if (open) closeSync(fd);
      open = false;
    },
  };
}
