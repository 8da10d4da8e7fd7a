import { sql, type Expression, type ExpressionBuilder, type Kysely, type RawBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { RequestAbandonedError, SearchesBusyError } from '../domain/errors.js';
import { nextTurn } from '../domain/next-turn.js';
import { foldCase, keysOf, type ListPosition, type OrderKeys, type SortField, type UserFilter, type UserOrder } from '../domain/user-query.js';
import type { ListedUser } from '../domain/user.js';
import type { SearchIndex } from './database.js';
import type { Tables, UserRow } from './tables.js';

// Lists that filter, sort and page by key. Every statement is bounded however large the store: a statement
// that searches examines at most SEARCH_SCAN_ROWS users, and no more than SEARCHES_PER_TURN such statements
// run in one turn of the event loop, however many searches are under way. A search of 1,000,000 users on
// SQLite (whose statements run on the event loop) then never stalls other requests; on PostgreSQL, searches
// hold at most half the pool's connections (Database.searchConnections), so the rest never wait for them.

/** Users a search examines per statement: well under a millisecond of SQLite's time. */
export const SEARCH_SCAN_ROWS = 1000;
/** Users a count of matches examines per statement: about a millisecond of SQLite's time. */
export const COUNT_SCAN_ROWS = 4000;
/**
 * Searching statements that may run in one turn of the event loop. With 24 searches of 250,000 users under
 * way and one statement each per turn, a health check waited up to 0.5-1 s; the wait now does not grow with
 * the number of searches.
 */
export const SEARCHES_PER_TURN = 4;
/**
 * Searches that may wait for their turn, unless configured (SEARCH_QUEUE); one more is refused (503,
 * Retry-After) rather than queued without end.
 */
export const SEARCHES_WAITING = 256;

/**
 * Users that may hold a key of the substring index (see SearchIndex) for the index to answer a search. A
 * search with a key that rare reads at most this many users and checks each against its whole text: a
 * millisecond or two of SQLite's time, a few of PostgreSQL's, however large the store.
 */
export const RARE_KEY_USERS = 2000;

export interface ListOptions {
  /** Searches that may wait for their turn (SEARCHES_WAITING when not given). */
  readonly searchQueue?: number;
  /** The store's substring index, if it has one. */
  readonly searchIndex?: SearchIndex | undefined;
  /** Searching statements that may run at once (unbounded when not given; see Database.searchConnections). */
  readonly searchConnections?: number;
}

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
function createTurnstile(perTurn: number, atOnce: number, maxWaiting: number) {
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

/** The column each field sorts by: the folded copy of text, so that case does not change the order. */
const COLUMN = { id: 'id', email: 'email_key', firstName: 'first_name_key', lastName: 'last_name_key' } as const satisfies Record<SortField, keyof UserRow>;

/** The columns a list reads: what it shows, and nothing else (each column read costs time on every row). */
export const LISTED_COLUMNS = ['id', 'first_name', 'last_name', 'email'] as const;
export type ListedRow = Pick<UserRow, (typeof LISTED_COLUMNS)[number]>;

/** Maps a row of a list to the user it shows. */
export const toListedUser = (row: ListedRow): ListedUser => ({ id: row.id, firstName: row.first_name, lastName: row.last_name, email: row.email });

type Users = ExpressionBuilder<Tables, 'users'>;
type UserSelect<O> = SelectQueryBuilder<Tables, 'users', O>;

/** A LIKE pattern that matches `text` anywhere, its wildcards escaped. */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The folded copies a search looks in. */
const SEARCHED_COLUMNS = ['first_name_key', 'last_name_key', 'email_key'] as const;

/** Rows whose folded names or address contain the folded text. */
function searching(eb: Users, search: string): Expression<SqlBool> {
  const pattern = containing(foldCase(search));
  // ESCAPE names the escape character: PostgreSQL has one by default, SQLite none.
  return eb.or(SEARCHED_COLUMNS.map((column) => sql<SqlBool>`${eb.ref(column)} like ${pattern} escape '\\'`));
}

/** The rows of the filter's e-mail address, if it names one: an index lookup. */
const byEmail = <O>(query: UserSelect<O>, filter: UserFilter) =>
  filter.email === undefined ? query : query.where('email_key', '=', foldCase(filter.email));

/** Sorts by the order's columns, or by the reverse of the order. */
function sorted<O>(query: UserSelect<O>, order: UserOrder, backwards: boolean): UserSelect<O> {
  return order.reduce((q, key) => q.orderBy(COLUMN[key.field], key.descending !== backwards ? 'desc' : 'asc'), query);
}

/**
 * Rows strictly beyond `keys` in the order (read forwards or backwards): for keys (a, b, id), rows with a
 * beyond the first key, or equal to it and b beyond the second, and so on. The first column's own bound
 * (`a >= ...`) is stated once more on its own so that the store can start from it in the index.
 */
function beyond(eb: Users, order: UserOrder, keys: OrderKeys, backwards: boolean): Expression<SqlBool> {
  const past = (i: number) => (order[i]!.descending !== backwards ? '<' : '>');
  const column = (i: number) => COLUMN[order[i]!.field];
  const alternatives = order.map((_, i) => eb.and([...order.slice(0, i).map((__, j) => eb(column(j), '=', keys[j]!)), eb(column(i), past(i), keys[i]!)]));
  const start = eb(column(0), past(0) === '<' ? '<=' : '>=', keys[0]!);
  return order.length === 1 ? alternatives[0]! : eb.and([start, eb.or(alternatives)]);
}

/** The keys of a row in an order. */
const keysOfRow = (row: Pick<UserRow, 'id' | 'email_key' | 'first_name_key' | 'last_name_key'>, order: UserOrder): OrderKeys =>
  order.map((key) => row[COLUMN[key.field]]);

/** List queries over the users table; `guard` translates store outages. */
export function createUserLists(db: Kysely<Tables>, guard: <T>(work: () => Promise<T>) => Promise<T>, options: ListOptions = {}) {
  const turnstile = createTurnstile(SEARCHES_PER_TURN, options.searchConnections ?? Infinity, options.searchQueue ?? SEARCHES_WAITING);
  /** One statement of a search, when its turn comes. */
  const searchStatement = <T>(search: UserFilter, statement: () => Promise<T>) => turnstile(search, () => guard(statement));
  const index = options.searchIndex;
  type Matches = RawBuilder<{ match_id: number }>;
  const looked = new WeakMap<UserFilter, Promise<Matches | undefined>>();

  /**
   * The users that may match a search, as the substring index finds them, when one of the search's keys
   * is rare enough (RARE_KEY_USERS) that reading its users takes bounded time (each is then checked
   * against the whole text, as the scan checks users). Undefined when the search has to examine users one
   * by one: no index, fewer than three characters, an address to match as well (its own index is
   * narrower), or only common keys. Asked once per search (its filter object).
   */
  function matchesOf(filter: UserFilter): Promise<Matches | undefined> {
    let found = looked.get(filter);
    if (found === undefined) {
      found = (async () => {
        if (index === undefined || filter.search === undefined || filter.email !== undefined) return undefined;
        const text = foldCase(filter.search);
        for (const key of index.keys(text)) {
          if (await searchStatement(filter, () => index.holdsAtMost(key, RARE_KEY_USERS, db))) return index.holding(key);
        }
        return undefined;
      })();
      looked.set(filter, found);
    }
    return found;
  }

  /** The users a query reads: all of them, or only those the index matched (read from the index first). */
  const source = (matches: Matches | undefined): UserSelect<object> =>
    matches === undefined
      ? db.selectFrom('users')
      : // CROSS JOIN keeps SQLite from reading users along a sort's index and looking each up in the matches.
        (db.selectFrom(matches.as('m')).crossJoin('users').whereRef('users.id', '=', 'm.match_id') as unknown as UserSelect<object>);

  /** Users of the filter's address, beyond `from` in the order (read backwards if asked); only the index's matches if given. */
  const candidates = (filter: UserFilter, order: UserOrder, from: OrderKeys | undefined, backwards: boolean, matches?: Matches) => {
    const query = byEmail(source(matches), filter);
    if (from !== undefined) return sorted(query.where((eb) => beyond(eb, order, from, backwards)), order, backwards);
    // From the start, a bound that holds for every row still leads SQLite to the first field's index: it then
    // sorts only the users that tie on that field, and stops at the limit. Without it, a sort by last and
    // first name sorted all 1,000,000 users for every page (97 ms; 0.05 ms with it).
    const first = COLUMN[order[0]!.field];
    return sorted(first === 'id' ? query : query.where(first, '>=', ''), order, backwards);
  };

  /**
   * The rows that match, in order from a position, a batch per statement (an empty batch may come when a
   * search found nothing among the users it examined). Without a search a statement reads `batch` matches;
   * with one it examines SEARCH_SCAN_ROWS users in order and keeps those that match.
   */
  async function* walk(filter: UserFilter, order: UserOrder, position: ListPosition | undefined, batch: number): AsyncGenerator<ListedUser[]> {
    const backwards = position !== undefined && 'before' in position;
    let from: OrderKeys | undefined = position === undefined ? undefined : 'after' in position ? position.after : position.before === 'end' ? undefined : position.before;
    const search = filter.search;
    const matches = search === undefined ? undefined : await matchesOf(filter);
    for (let first = true; ; first = false) {
      if (search === undefined || matches !== undefined) {
        // The users of the rare key are checked against the whole text as the scan checks users.
        const query = candidates(filter, order, from, backwards, matches).$if(search !== undefined, (q) => q.where((eb) => searching(eb, search!)));
        const read = () => query.select(LISTED_COLUMNS).limit(batch).execute();
        if (matches === undefined && !first) await nextTurn();
        const users = (matches !== undefined ? await searchStatement(filter, read) : await guard(read)).map(toListedUser);
        yield users;
        if (users.length < batch) return;
        from = keysOf(users[users.length - 1]!, order);
      } else {
        // Only the columns the search and the list read: materialising every column of the examined users
        // was a third of a search statement's time.
        const examined = candidates(filter, order, from, backwards).select([...LISTED_COLUMNS, ...SEARCHED_COLUMNS]).limit(SEARCH_SCAN_ROWS).as('examined');
        // The users it found, and the last user it examined (where the next statement starts), in one turn.
        const [found, last] = await searchStatement(filter, async () => [
          await sorted(db.selectFrom(examined).select(LISTED_COLUMNS).where((eb) => searching(eb as unknown as Users, search)) as unknown as UserSelect<ListedRow>, order, backwards).execute(),
          await candidates(filter, order, from, backwards).select(['id', 'email_key', 'first_name_key', 'last_name_key']).offset(SEARCH_SCAN_ROWS - 1).limit(1).executeTakeFirst(),
        ] as const);
        yield found.map(toListedUser);
        if (last === undefined) return;
        from = keysOfRow(last, order);
      }
    }
  }

  /** Up to `limit` matching rows from a position (in the order, even when read backwards). */
  async function take(filter: UserFilter, order: UserOrder, position: ListPosition | undefined, limit: number, skip = 0): Promise<ListedUser[]> {
    const rows: ListedUser[] = [];
    let skipped = 0;
    for await (const batch of walk(filter, order, position, limit + skip)) {
      for (const row of batch) {
        if (skipped < skip) skipped++;
        else if (rows.push(row) === limit) break;
      }
      if (rows.length === limit) break;
    }
    return position !== undefined && 'before' in position ? rows.reverse() : rows;
  }

  return {
    walk,
    /** Up to `limit` users that match, from a position (or the start). */
    listFrom: (filter: UserFilter, order: UserOrder, position: ListPosition | undefined, limit: number) => take(filter, order, position, limit),
    /** Up to `limit` users that match, after skipping `offset` of them: a page picked by number. */
    async listAt(filter: UserFilter, order: UserOrder, offset: number, limit: number): Promise<ListedUser[]> {
      // Without a search the store skips rows itself, along an index; a search has to examine each user.
      if (filter.search === undefined) {
        return (await guard(() => candidates(filter, order, undefined, false).select(LISTED_COLUMNS).limit(limit).offset(offset).execute())).map(toListedUser);
      }
      return take(filter, order, undefined, limit, offset);
    },
    /** How many users match a filter that is not empty. */
    async countMatching(filter: UserFilter): Promise<number> {
      if (filter.search === undefined) {
        const { n } = await guard(() => byEmail(db.selectFrom('users'), filter).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow());
        return Number(n);
      }
      const search = filter.search;
      const matches = await matchesOf(filter);
      if (matches !== undefined) {
        const { n } = await searchStatement(filter, () =>
          source(matches)
            .where((eb) => searching(eb, search))
            .select((eb) => eb.fn.countAll<number | string>().as('n'))
            .executeTakeFirstOrThrow(),
        );
        return Number(n);
      }
      let total = 0;
      for (let after = 0; ; ) {
        const examined = byEmail(db.selectFrom('users'), filter)
          .select(['id', ...SEARCHED_COLUMNS])
          .where('id', '>', after)
          .orderBy('id')
          .limit(COUNT_SCAN_ROWS)
          .as('examined');
        const { last, n } = await searchStatement(filter, () =>
          db
            .selectFrom(examined)
            .select((eb) => [
              eb.fn.max('id').as('last'),
              eb.fn.sum<number | string | null>(eb.case().when(searching(eb as unknown as Users, search)).then(1).else(0).end()).as('n'),
            ])
            .executeTakeFirstOrThrow(),
        );
        if (last === null || last === undefined) return total;
        total += Number(n ?? 0);
        after = Number(last);
      }
    },
  };
}
