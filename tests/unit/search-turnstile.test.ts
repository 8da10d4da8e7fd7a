import { createTurnstile, SEARCH_TURN_MS } from '../../server/db/search-turnstile.js';
import type { SearchesBusyError } from '../../server/domain/errors.js';
import type { UserFilter } from '../../server/domain/user-query.js';

// When a search's statements run (server/db/search-turnstile.ts): on SQLite they run on the event loop, so
// the turnstile is what keeps searches from holding it. Turns are counted, not timed: a ticker that runs once
// per turn of the event loop (setImmediate, as the turnstile's own admission).

const PER_TURN = 4;

/** Counts turns of the event loop until `work` settles, and which turn each statement ran in. */
async function inTurns<T>(work: (turn: () => number) => Promise<T>): Promise<{ turns: number; result: T }> {
  let turns = 0;
  let done = false;
  const tick = () => {
    turns++;
    if (!done) setImmediate(tick);
  };
  setImmediate(tick);
  try {
    return { result: await work(() => turns), turns };
  } finally {
    done = true;
  }
}

/** Holds the event loop, as an SQLite statement does. */
const busy = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

test('a search of a small store runs its statements in the turn that began them, not one turn each', async () => {
  const turnstile = createTurnstile({ perTurn: PER_TURN, atOnce: Infinity, maxWaiting: 1000, maxWaitingPerAsker: 0 });
  // 100 searches of five statements each, each statement next to free (a store of 12 users): one turn per
  // four statements would take at least 125 turns.
  const { turns } = await inTurns(() =>
    Promise.all(
      Array.from({ length: 100 }, async () => {
        const search: UserFilter = { search: 'mira' };
        for (let i = 0; i < 5; i++) await turnstile(search, async () => i);
      }),
    ),
  );
  expect(turns).toBeLessThan(125 / 5);
});

test('statements that cost more than the turn may spend start only as many as the turn begins with', async () => {
  const turnstile = createTurnstile({ perTurn: PER_TURN, atOnce: Infinity, maxWaiting: 1000, maxWaitingPerAsker: 0 });
  const ranIn: number[] = [];
  await inTurns((turn) =>
    Promise.all(
      Array.from({ length: 12 }, () =>
        turnstile({ search: 'mira' }, async () => {
          ranIn.push(turn());
          busy(SEARCH_TURN_MS + 1);
        }),
      ),
    ),
  );
  const perTurn = [...ranIn.reduce((count, turn) => count.set(turn, (count.get(turn) ?? 0) + 1), new Map<number, number>()).values()];
  expect(Math.max(...perTurn)).toBe(PER_TURN);
  expect(perTurn).toHaveLength(12 / PER_TURN);
});

test('a statement that asks while others wait takes its place behind them, even with time left in the turn', async () => {
  const turnstile = createTurnstile({ perTurn: 1, atOnce: Infinity, maxWaiting: 1000, maxWaitingPerAsker: 0 });
  const order: string[] = [];
  let late: Promise<unknown> | undefined;
  await Promise.all([
    turnstile({ search: 'a' }, async () => {
      order.push('a');
      // Asks while b waits, in a turn that has spent next to nothing.
      late = turnstile({ search: 'c' }, async () => order.push('c'));
    }),
    turnstile({ search: 'b' }, async () => order.push('b')),
  ]);
  await late;
  expect(order).toEqual(['a', 'b', 'c']);
});

test('at most `atOnce` statements run at the same time, however little the turn has spent', async () => {
  const turnstile = createTurnstile({ perTurn: PER_TURN, atOnce: 2, maxWaiting: 1000, maxWaitingPerAsker: 0 });
  let running = 0;
  let most = 0;
  await Promise.all(
    Array.from({ length: 10 }, () =>
      turnstile({ search: 'mira' }, async () => {
        most = Math.max(most, ++running);
        // An asynchronous statement (PostgreSQL's): it ends on a later turn.
        await new Promise((resolve) => setTimeout(resolve, 1));
        running--;
      }),
    ),
  );
  expect(most).toBe(2);
});

test("askers take turns: one with many statements waiting delays another's next statement by one of its own, not by all", async () => {
  const turnstile = createTurnstile({ perTurn: 1, atOnce: 1, maxWaiting: 1000, maxWaitingPerAsker: 0 });
  const order: string[] = [];
  const run = (searcher: string, name: string) => turnstile({ search: name, searcher }, async () => void order.push(name));
  // The flooder's ten are waiting before the other asks.
  await Promise.all([...Array.from({ length: 10 }, (_, i) => run('flooder', `f${i}`)), run('other', 'o')]);
  expect(order.indexOf('o')).toBeLessThanOrEqual(2);
});

test('an asker with its share of searches waiting is refused its next search; others are admitted', async () => {
  const turnstile = createTurnstile({ perTurn: 1, atOnce: 1, maxWaiting: 1000, maxWaitingPerAsker: 3 });
  const run = (searcher: string) => turnstile({ search: 'x', searcher }, async () => undefined);
  const outcomes = await Promise.allSettled([...Array.from({ length: 8 }, () => run('flooder')), run('other')]);
  const refused = outcomes.map((outcome) => (outcome.status === 'rejected' ? (outcome.reason as SearchesBusyError).reason : 'ran'));
  // Asked in one turn, before any ran: three wait, the flooder's other five are refused, the other runs.
  expect(refused).toEqual(['ran', 'ran', 'ran', ...Array(5).fill('client-share'), 'ran']);
});

test('a search admitted is never refused a later statement, whatever its asker has waiting', async () => {
  const turnstile = createTurnstile({ perTurn: 1, atOnce: 1, maxWaiting: 1000, maxWaitingPerAsker: 1 });
  const search: UserFilter = { search: 'x', searcher: 'one' };
  const statements = await Promise.all(Array.from({ length: 5 }, (_, i) => turnstile(search, async () => i)));
  expect(statements).toEqual([0, 1, 2, 3, 4]);
});
