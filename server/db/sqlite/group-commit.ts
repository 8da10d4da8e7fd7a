import { setTimeout } from 'node:timers/promises';
import { CompiledQuery, type Kysely } from 'kysely';
import { StoreUnavailableError } from '../../domain/errors.js';
import { monotonicMs } from '../monotonic-clock.js';
import type { Tables } from '../tables.js';
import { NOT_BEGUN, type Write, type WriteOptions, type WriteUnit } from '../write.js';

/** Most units one commit carries; the rest wait for the next, so that no batch holds the write lock long. */
export const MAX_UNITS_PER_COMMIT = 256;
/**
 * Most units that may wait for a commit; one more fails at once (503, nothing written) rather than adding to
 * a wait that a held lock makes grow without end.
 */
export const MAX_WAITING_UNITS = 4 * MAX_UNITS_PER_COMMIT;
/** Longest pause between two tries for a write lock that another connection holds. */
const MAX_LOCK_RETRY_MS = 50;

/** How long units may wait for the write lock (the statement timeout). */
export interface GroupCommitSettings {
  readonly lockWaitMs: number;
}

interface Pending {
  readonly work: WriteUnit<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  /** The monotonic time past which the unit is not begun (WriteOptions.beginBy). */
  readonly deadline: number;
}

type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

/**
 * The statements of a batch, compiled once: built through Kysely's sql template for every unit, they would be a
 * share of each write's CPU.
 */
const STATEMENTS = {
  savepoint: CompiledQuery.raw('savepoint unit'),
  release: CompiledQuery.raw('release unit'),
  rollbackUnit: CompiledQuery.raw('rollback to unit'),
  commit: CompiledQuery.raw('commit'),
  rollback: CompiledQuery.raw('rollback'),
  begin: CompiledQuery.raw('begin immediate'),
  noBusyWait: CompiledQuery.raw('pragma busy_timeout = 0'),
};
const busyWait = (waitMs: number) => CompiledQuery.raw(`pragma busy_timeout = ${waitMs}`);

const notBegun = () => new StoreUnavailableError({ code: NOT_BEGUN });
const isBusy = (error: unknown) => String((error as { code?: unknown } | null)?.code ?? '').startsWith('SQLITE_BUSY');

/**
 * Rolls one unit back to its savepoint. After SQLITE_FULL or IOERR, SQLite may have rolled the whole
 * transaction back itself, savepoints included: then the batch fails with the unit's own error (an outage,
 * 503), not with "no such savepoint" (a 500), and every unit of the batch gets it, as none was committed.
 */
async function undoUnit(trx: Kysely<Tables>, error: unknown): Promise<void> {
  try {
    await trx.executeQuery(STATEMENTS.rollbackUnit);
    await trx.executeQuery(STATEMENTS.release);
  } catch {
    throw error;
  }
}

/**
 * Takes the write lock without waiting (BEGIN IMMEDIATE with no busy timeout): false when another connection
 * holds it. SQLite's own wait sleeps inside the call, and so would hold the event loop (or the writer thread)
 * for as long as an outside lock is held, /healthz included, while the requests it waits for time out.
 */
async function tryLock(conn: Kysely<Tables>, restoreWait: CompiledQuery): Promise<boolean> {
  await conn.executeQuery(STATEMENTS.noBusyWait);
  try {
    await conn.executeQuery(STATEMENTS.begin);
    return true;
  } catch (error) {
    if (isBusy(error)) return false;
    throw error;
  } finally {
    await conn.executeQuery(restoreWait);
  }
}

/**
 * Runs the units of a batch in one transaction, each in a savepoint of its own, and commits; false when the
 * lock was held by another connection (nothing ran). A unit whose deadline passed is not begun.
 */
function runBatch(db: Kysely<Tables>, batch: readonly Pending[], restoreWait: CompiledQuery): Promise<boolean> {
  return db.connection().execute(async (conn) => {
    if (!(await tryLock(conn, restoreWait))) return false;
    const outcomes: Outcome[] = [];
    try {
      for (const unit of batch) {
        // Checked as the unit would begin, inside the transaction: its asker answers only after this moment.
        if (monotonicMs() > unit.deadline) {
          outcomes.push({ ok: false, error: notBegun() });
          continue;
        }
        await conn.executeQuery(STATEMENTS.savepoint);
        try {
          const value = await unit.work(conn);
          await conn.executeQuery(STATEMENTS.release);
          outcomes.push({ ok: true, value });
        } catch (error) {
          await undoUnit(conn, error);
          outcomes.push({ ok: false, error });
        }
      }
      await conn.executeQuery(STATEMENTS.commit);
    } catch (error) {
      // The transaction did not commit (a failed COMMIT or ROLLBACK TO): nothing in it happened. SQLite may
      // have rolled it back itself already (SQLITE_FULL, IOERR): then there is nothing left to roll back.
      await conn.executeQuery(STATEMENTS.rollback).catch(() => undefined);
      for (const unit of batch) unit.reject(error);
      return true;
    }
    batch.forEach((unit, index) => {
      const outcome = outcomes[index]!;
      if (outcome.ok) unit.resolve(outcome.value);
      else unit.reject(outcome.error);
    });
    return true;
  });
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
 *
 * While another connection holds the write lock, batches wait for it between tries, never inside SQLite,
 * so that reads go on. A unit not begun by its deadline (its asker's, or `lockWaitMs` from its arrival), be
 * it held by the lock or by the commits before it, fails (503 WRITE_NOT_BEGUN) and is never begun later: a
 * 503 means nothing was written, and a client that retries makes no duplicate.
 *
 * Why, and what it was measured against: docs/decisions/sqlite-group-commit.md.
 */
export function groupCommit(db: Kysely<Tables>, { lockWaitMs }: GroupCommitSettings): Write {
  const queue: Pending[] = [];
  const restoreWait = busyWait(lockWaitMs);
  let draining = false;

  /** Fails the waiting units whose deadline passed. */
  function expire(now: number): void {
    for (let i = queue.length - 1; i >= 0; i--) {
      if (queue[i]!.deadline < now) queue.splice(i, 1)[0]!.reject(notBegun());
    }
  }

  // One batch at a time; the units that arrive meanwhile make the next.
  async function drain(): Promise<void> {
    draining = true;
    try {
      for (let pause = 1; queue.length > 0; ) {
        expire(monotonicMs());
        const batch = queue.splice(0, MAX_UNITS_PER_COMMIT);
        if (batch.length === 0) break;
        const failed = (error: unknown) => {
          for (const unit of batch) unit.reject(error);
          return true;
        };
        if (await runBatch(db, batch, restoreWait).catch(failed)) {
          pause = 1;
          continue;
        }
        queue.unshift(...batch);
        await setTimeout(pause);
        pause = Math.min(pause * 2, MAX_LOCK_RETRY_MS);
      }
    } finally {
      draining = false;
    }
  }

  // Every unit is atomic here, `atomic` or not: its savepoint costs less than a commit of its own.
  return <T>(work: WriteUnit<T>, options?: WriteOptions) =>
    new Promise<T>((resolve, reject) => {
      if (queue.length >= MAX_WAITING_UNITS) return reject(new StoreUnavailableError({ code: 'WRITE_QUEUE_FULL' }));
      const deadline = options?.beginBy ?? monotonicMs() + lockWaitMs;
      queue.push({ work, resolve: resolve as (value: unknown) => void, reject, deadline });
      // After the I/O callbacks of this turn: every request that arrived with this one joins its commit.
      if (!draining && queue.length === 1) setImmediate(() => void drain());
    });
}
