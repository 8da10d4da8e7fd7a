import { RequestAbandonedError, SearchesBusyError } from '../domain/errors.js';
import type { UserFilter } from '../domain/user-query.js';

// When a search's statements may run: the bound that keeps searches, however many, from holding the event
// loop (SQLite's statements run on it) or every pooled connection (PostgreSQL's). Used by user-lists.ts.

/**
 * Time a turn of the event loop may spend on searching statements before the next waits for a later turn.
 * Each statement is bounded (about a millisecond of SQLite's time): this is what a turn may add past the
 * `perTurn` statements it starts with, about what those four cost. A statement of a small store costs tens
 * of microseconds, and a turn's wait for each came on top (at 12 users on SQLite, `q=zq` ran at 1,474 req/s
 * with a wait per statement, 1,703 without).
 */
export const SEARCH_TURN_MS = 2;

/**
 * Lets `perTurn` searching statements start in each turn of the event loop, and more, one after another,
 * only while less than `turnMs` has passed since that turn began; at most `atOnce` run at the same time, in
 * the order they asked. A search asks before each statement; its first may be refused
 * when `maxWaiting` wait already, and once admitted it is never cut off, unless its client went away (then
 * it stops: a client that asks and hangs up at once would otherwise have the server examine every user for
 * nobody). A search is its filter object: a request's page and its count share it, so a request is refused
 * before its first statement or not at all. Hand-written: p-limit and p-queue bound how many run at once or
 * per interval of time, not per turn of the event loop, which is what keeps SQLite's searches (whose
 * statements run on it) from stalling other requests; and a slot is held for one statement, never while a
 * slow client reads the answer.
 */
export function createTurnstile(perTurn: number, atOnce: number, maxWaiting: number, turnMs = SEARCH_TURN_MS) {
  const admitted = new WeakSet<UserFilter>();
  const waiting: Array<() => void> = [];
  let running = 0;
  let scheduled = false;
  /** When the latest turn that started statements began. */
  let turnBegan = -Infinity;
  const start = (next: () => void) => {
    running++;
    next();
  };
  /** Whether a statement may start now: a place is free, and the turn that last started statements has time left. */
  const withinTurn = () => running < atOnce && performance.now() - turnBegan < turnMs;
  const admit = () => {
    scheduled = false;
    turnBegan = performance.now();
    for (const next of waiting.splice(0, Math.min(perTurn, atOnce - running))) start(next);
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
    // Nobody waiting and time left in the turn: it runs now (a search's next statement, or another search).
    if (waiting.length === 0 && withinTurn()) running++;
    else
      await new Promise<void>((resolve) => {
        waiting.push(resolve);
        if (running < atOnce) schedule();
      });
    try {
      goOn(search);
      return await statement();
    } finally {
      running--;
      // Still within the turn's time, the next in line runs at once; else it waits for a later turn.
      if (waiting.length > 0) {
        if (withinTurn()) start(waiting.shift()!);
        else schedule();
      }
    }
  };
}
