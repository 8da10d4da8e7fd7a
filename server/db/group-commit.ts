import { sql, type Kysely } from 'kysely';
import type { Tables } from './tables.js';

/**
 * One atomic piece of writing: it runs against the transaction it is handed, and only against it (the
 * store's own handle is busy with that very transaction until it commits).
 */
export type WriteUnit<T> = (trx: Kysely<Tables>) => Promise<T>;

/**
 * Runs a unit of writes; resolves once its changes are durable. An `atomic` unit commits all its changes
 * or none; the statements of any other unit commit each on its own, at the latest before it resolves.
 */
export type Write = <T>(work: WriteUnit<T>, options?: { readonly atomic?: boolean }) => Promise<T>;

/** Most units one commit carries; the rest wait for the next, so that no batch holds the write lock long. */
export const MAX_UNITS_PER_COMMIT = 256;

interface Pending {
  readonly work: WriteUnit<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

/**
 * Rolls one unit back to its savepoint. After SQLITE_FULL or IOERR, SQLite may have rolled the whole
 * transaction back itself, savepoints included: then the batch fails with the unit's own error (an outage,
 * 503), not with "no such savepoint" (a 500), and every unit of the batch gets it, as none was committed.
 */
async function undoUnit(trx: Kysely<Tables>, error: unknown): Promise<void> {
  try {
    await sql`rollback to unit`.execute(trx);
    await sql`release unit`.execute(trx);
  } catch {
    throw error;
  }
}

/**
 * Group commit, for a store whose every commit waits for the disk (SQLite with synchronous=FULL): units of
 * writes that arrive in the same turn of the event loop run one after the other in one transaction, each
 * in a savepoint of its own, and share one commit and so one fsync.
 *
 * Each unit keeps what a transaction of its own would give it. It is atomic: a unit that throws is rolled
 * back to its savepoint, alone, and gets its error. It is isolated: units run one at a time, and nothing
 * else uses the connection until the commit. It is durable when acknowledged: no unit resolves before the
 * commit that carries it has returned, and if that commit fails, every unit in it fails.
 */
export function groupCommit(db: Kysely<Tables>): Write {
  const queue: Pending[] = [];

  async function runBatch(batch: readonly Pending[]): Promise<void> {
    const outcomes: Outcome[] = [];
    try {
      await db.transaction().execute(async (trx) => {
        for (const unit of batch) {
          await sql`savepoint unit`.execute(trx);
          try {
            const value = await unit.work(trx);
            await sql`release unit`.execute(trx);
            outcomes.push({ ok: true, value });
          } catch (error) {
            await undoUnit(trx, error);
            outcomes.push({ ok: false, error });
          }
        }
      });
    } catch (error) {
      // The transaction did not commit (a failed BEGIN, COMMIT or ROLLBACK TO): nothing in it happened.
      for (const unit of batch) unit.reject(error);
      return;
    }
    batch.forEach((unit, index) => {
      const outcome = outcomes[index]!;
      if (outcome.ok) unit.resolve(outcome.value);
      else unit.reject(outcome.error);
    });
  }

  // A flush is pending exactly while the queue is not empty.
  function flush(): void {
    const batch = queue.splice(0, MAX_UNITS_PER_COMMIT);
    if (queue.length > 0) setImmediate(flush);
    void runBatch(batch);
  }

  // Every unit is atomic here, `atomic` or not: its savepoint costs less than a commit of its own.
  return <T>(work: WriteUnit<T>) =>
    new Promise<T>((resolve, reject) => {
      // After the I/O callbacks of this turn: every request that arrived with this one joins its commit.
      if (queue.push({ work, resolve: resolve as (value: unknown) => void, reject }) === 1) setImmediate(flush);
    });
}
