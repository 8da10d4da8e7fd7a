import { RequestAbandonedError, SearchesBusyError } from '../domain/errors.js';
import type { UserFilter } from '../domain/user-query.js';

// When a search's statements may run: the bound that keeps searches, however many, from holding the event
// loop (SQLite's statements run on it) or every pooled connection (PostgreSQL's). Used by user-lists.ts.

/**
 * Lets at most `perTurn` searching statements start in each turn of the event loop, and at most `atOnce` run
 * at the same time, in the order they asked. A search asks before each statement; its first may be refused
 * when `maxWaiting` wait already, and once admitted it is never cut off, unless its client went away (then
 * it stops: a client that asks and hangs up at once would otherwise have the server examine every user for
 * nobody). A search is its filter object: a request's page and its count share it, so a request is refused
 * before its first statement or not at all. Hand-written: p-limit and p-queue bound how many run at once or
 * per interval of time, not per turn of the event loop, which is what keeps SQLite's searches (whose
 * statements run on it) from stalling other requests; and a slot is held for one statement, never while a
 * slow client reads the answer.
 */
export function createTurnstile(perTurn: number, atOnce: number, maxWaiting: number) {
  const admitted = new WeakSet<UserFilter>();
  const waiting: Array<() => void> = [];
  let running = 0;
  let scheduled = false;
  const admit = () => {
    scheduled = false;
    for (const start of waiting.splice(0, Math.min(perTurn, atOnce - running))) {
      running++;
      start();
    }
    if (waiting.length > 0 && running < atOnce) schedule();
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(admit);
  };
  /** A search whose client went away stops here, before its next statement (and after its wait). */
  const goOn = (search: UserFilter) => {
    if (search.signal?.aborted) throw new RequestAbandonedError();
  };
  /** Runs one statement of a search when its turn comes. */
  return async <T>(search: UserFilter, statement: () => Promise<T>): Promise<T> => {
    goOn(search);
    if (!admitted.has(search)) {
      if (waiting.length >= maxWaiting) throw new SearchesBusyError();
      admitted.add(search);
    }
    await new Promise<void>((resolve) => {
      waiting.push(resolve);
      if (running < atOnce) schedule();
    });
    try {
      goOn(search);
      return await statement();
    } finally {
      running--;
      if (waiting.length > 0) schedule();
    }
  };
}
