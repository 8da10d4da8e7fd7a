import type { Kysely } from 'kysely';
import { WriteOutcomeUnknownError } from '../../domain/errors.js';
import type { Write } from '../write.js';
import { postgresOutage } from '../outage.js';
import { wentUnanswered } from './pool.js';
import type { Tables } from '../tables.js';

/**
 * The unit's error, or, where a statement that commits (a COMMIT, or a statement outside a transaction) went
 * to the server and its answer never came back, an unknown outcome: the server may have committed it.
 */
function committingFailure(error: unknown): unknown {
  return wentUnanswered(error) ? new WriteOutcomeUnknownError({ cause: error, code: postgresOutage(error) ?? 'UNANSWERED' }) : error;
}

/**
 * PostgreSQL's writer. Each statement commits on its own unless the unit must be atomic: a transaction would
 * add two round trips, and concurrent commits on the pool's connections share WAL flushes in the server
 * itself. Every answer the server gives is what happened (its statement timeout cancels a statement that
 * waits, and the cancelled statement is not made); a write whose committing statement got no answer is an
 * unknown outcome (504). In an atomic unit only the COMMIT commits: a statement before it that got no answer
 * leaves the transaction to be rolled back, never committed.
 */
export function postgresWriter(db: Kysely<Tables>): Write {
  return async (work, options) => {
    if (!options?.atomic) {
      try {
        return await work(db);
      } catch (error) {
        throw committingFailure(error);
      }
    }
    const transaction = await db.startTransaction().execute();
    let value: Awaited<ReturnType<typeof work>>;
    try {
      value = await work(transaction);
    } catch (error) {
      await transaction
        .rollback()
        .execute()
        .catch(() => undefined);
      throw error;
    }
    try {
      await transaction.commit().execute();
    } catch (error) {
      throw committingFailure(error);
    }
    return value;
  };
}
