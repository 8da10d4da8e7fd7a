import { RequestAbandonedError, SearchesBusyError } from '../domain/errors.js';
import type { UserFilter } from '../domain/user-query.js';

// When a search's statements may run: the bound that keeps searches, however many, from holding the event
// loop (SQLite's statements run on it) or every pooled connection (PostgreSQL's). Used by user-lists.ts.

/**
 * Time a turn of the event loop may spend on searching statements before the next waits for a later turn.
 * Each statement is bounded (about a millisecond of SQLite's time): this is what a turn may add past the
 * `perTurn` statements it starts with, about what those four cost. A statement of a small store costs tens
 * of microseconds, and a wait of a turn for each would come on top: a turn with time left runs the next at once.
 */
export const SEARCH_TURN_MS = 2;

/**
 * Statements waiting for their turn, in a queue per asker (UserFilter.searcher), taken from the askers in
 * turn: an asker with many searches waiting delays another's next statement by one of its own, not by all.
 */
class TakingTurns {
  /** Each asker's waiting statements; the Map's order is the order in which askers are served next. */
  readonly #queues = new Map<string, Array<() => void>>();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  waitingOf(asker: string): number {
    return this.#queues.get(asker)?.length ?? 0;
  }

  push(asker: string, next: () => void): void {
    const queue = this.#queues.get(asker);
    if (queue) queue.push(next);
    else this.#queues.set(asker, [next]);
    this.#size++;
  }

  /** The first asker's next statement; that asker goes to the back of the line if it has more waiting. */
  shift(): (() => void) | undefined {
    const first = this.#queues.entries().next();
    if (first.done) return undefined;
    const [asker, queue] = first.value;
    const next = queue.shift()!;
    this.#queues.delete(asker);
    if (queue.length > 0) this.#queues.set(asker, queue);
    this.#size--;
    return next;
  }
}

/** The bounds of a turnstile: statements per turn, at once, and searches that may wait, in all and per asker. */
export interface TurnstileBounds {
  readonly perTurn: number;
  readonly atOnce: number;
  readonly maxWaiting: number;
  /** Searches one asker may have waiting (0: no bound but `maxWaiting`). */
  readonly maxWaitingPerAsker: number;
  readonly turnMs?: number;
}

/**
 * Lets `perTurn` searching statements start in each turn of the event loop, and more, one after another,
 * only while less than `turnMs` has passed since that turn began; at most `atOnce` run at the same time,
 * taken from the askers in turn (TakingTurns). A search asks before each statement; its first is refused
 * when `maxWaiting` wait already, or when its asker has `maxWaitingPerAsker` waiting (a client that floods
 * is refused beyond its share, and others are still served); once admitted it is never cut off, unless its
 * client went away (then it stops: a client that asks and hangs up at once would otherwise have the server
 * examine every user for nobody). A search is its filter object: a request's page and its count share it,
 * so a request is refused before its first statement or not at all. Hand-written: p-limit and p-queue bound
 * how many run at once or per interval of time, not per turn of the event loop, which is what keeps SQLite's
 * searches (whose statements run on it) from stalling other requests; and a slot is held for one statement,
 * never while a slow client reads the answer. Why, and what it was measured against:
 * docs/decisions/search-turnstile.md.
 */
export function createTurnstile({ perTurn, atOnce, maxWaiting, maxWaitingPerAsker, turnMs = SEARCH_TURN_MS }: TurnstileBounds) {
  const admitted = new WeakSet<UserFilter>();
  const waiting = new TakingTurns();
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
    for (let n = Math.min(perTurn, atOnce - running); n > 0 && waiting.size > 0; n--) start(waiting.shift()!);
    if (waiting.size > 0 && running < atOnce) schedule();
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
    const asker = search.searcher ?? '';
    if (!admitted.has(search)) {
      if (waiting.size >= maxWaiting) throw new SearchesBusyError('queue-full');
      if (maxWaitingPerAsker > 0 && waiting.waitingOf(asker) >= maxWaitingPerAsker) throw new SearchesBusyError('client-share');
      admitted.add(search);
    }
    // Nobody waiting and time left in the turn: it runs now (a search's next statement, or another search).
    if (waiting.size === 0 && withinTurn()) running++;
    else
      await new Promise<void>((resolve) => {
        waiting.push(asker, resolve);
        if (running < atOnce) schedule();
      });
    try {
      goOn(search);
      return await statement();
    } finally {
      running--;
      // Still within the turn's time, the next in line runs at once; else it waits for a later turn.
      if (waiting.size > 0) {
        if (withinTurn()) start(waiting.shift()!);
        else schedule();
      }
    }
  };
}
