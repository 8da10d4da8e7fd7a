import { sql, type Compilable, type CompiledQuery, type Kysely, type RawBuilder } from 'kysely';
import { nextTurn } from '../domain/next-turn.js';
import { foldCase, keysOf, SEARCH_COUNT_REACH, searchTally, type ListPosition, type OrderKeys, type UserFilter, type UserOrder } from '../domain/user-query.js';
import type { ListedUser, Tally, UserSlice } from '../domain/user.js';
import type { SearchIndex } from './dialect-support.js';
import {
  beyond,
  byEmail,
  COLUMN,
  containsText,
  firstBeyond,
  inIdOrder,
  keysOfRow,
  LISTED_COLUMNS,
  SEARCHED_COLUMNS,
  sorted,
  toListedUser,
  type ListedRow,
  type UserSelect,
} from './list-sql.js';
import { createTurnstile } from './search-turnstile.js';
import { SEARCH_BUDGET_MS, SEARCHES_WAITING } from '../config-defaults.js';
import { COUNT_SCAN_ROWS, EXAMINED_WHOLE_IDS, SEARCH_SCAN_ROWS, SEARCHES_PER_TURN } from './list-bounds.js';
import type { Tables } from './tables.js';

// Lists that filter, sort and page by key, each statement within the bounds of list-bounds.ts.

/** A stretch of a list that one statement read: the users that match in it, and the keys of the last user it examined (none where the list ends). */
export interface Stretch {
  readonly users: ListedUser[];
  readonly until?: OrderKeys;
}

export interface ListOptions {
  /** Store time a search may spend examining users one by one per page, and half of it per count (SEARCH_BUDGET_MS when not given). */
  readonly searchBudgetMs?: number;
  /** Searches that may wait for their turn (SEARCHES_WAITING when not given). */
  readonly searchQueue?: number;
  /** Of those, how many one asker (UserFilter.searcher) may have waiting (no bound of its own when not given). */
  readonly searchQueuePerClient?: number;
  /** The store's substring index, if it has one. */
  readonly searchIndex?: SearchIndex | undefined;
  /** Searching statements that may run at once (unbounded when not given; see Database.searchConnections). */
  readonly searchConnections?: number;
  /** The store's reader, if it has one (Database.read): every statement of a list runs there. */
  readonly read?: (<Row>(query: CompiledQuery<Row>) => Row[]) | undefined;
}

/** List queries over the users table; `guard` translates store outages. */
export function createUserLists(db: Kysely<Tables>, guard: <T>(work: () => Promise<T>) => Promise<T>, options: ListOptions = {}) {
  const turnstile = createTurnstile({
    perTurn: SEARCHES_PER_TURN,
    atOnce: options.searchConnections ?? Infinity,
    maxWaiting: options.searchQueue ?? SEARCHES_WAITING,
    maxWaitingPerAsker: options.searchQueuePerClient ?? 0,
  });
  const { read } = options;
  /**
   * The rows of a search's statement, compiled: at once on the store's reader where it has one, without
   * Kysely's driver (its connection's mutex and the awaits around each statement), else through Kysely.
   */
  const searchRows = <Row>(query: CompiledQuery<Row>): Promise<Row[]> =>
    read === undefined ? db.executeQuery(query).then((result) => result.rows) : new Promise((resolve) => resolve(read(query)));
  /** One statement of a search, when its turn comes. */
  const searchStatement = <T>(search: UserFilter, statement: () => Promise<T>) => turnstile(search, () => guard(statement));
  /** The rows of a statement that does not search: on the store's reader where it has one, else through Kysely. */
  const storeRows = <Row>(statement: () => Compilable<Row> & { execute(): Promise<Row[]> }): Promise<Row[]> =>
    read === undefined ? statement().execute() : new Promise((resolve) => resolve(read(statement().compile())));
  const index = options.searchIndex;
  type Matches = RawBuilder<{ match_id: number }>;
  /** The index's matches of a search, and where the store reads them by id, their ids in ascending order (keptMatches.byId). */
  type Matching = { readonly matches: Matches; readonly ids?: readonly number[] | undefined };
  /**
   * What the substring index found for a search: every user that matches, when they are few (at most
   * SEARCH_COUNT_REACH), and how many; or that they are more than that.
   */
  type Found = ({ readonly few: true; readonly count: number } & Matching) | { readonly few: false };
  const looked = new WeakMap<UserFilter, Promise<Found | undefined>>();

  /**
   * Asks the substring index how many users match a search, counting up to one past SEARCH_COUNT_REACH: one
   * statement that reads a bounded part of the index however large the store. Undefined when the search has
   * to examine users one by one: no index, text the index cannot narrow (under three characters), or an
   * address to match as well (its own index is narrower). Asked once per search (its filter object).
   */
  function lookUp(filter: UserFilter): Promise<Found | undefined> {
    let found = looked.get(filter);
    if (found === undefined) {
      found = (async (): Promise<Found | undefined> => {
        if (index === undefined || filter.search === undefined || filter.email !== undefined) return undefined;
        if (read !== undefined) {
          const statement = () => db.selectFrom('users').select((eb) => eb.fn.max('id').as('top'));
          const [{ top }] = (await guard(() => storeRows(statement))) as [{ top: number | null }];
          if ((top ?? 0) <= EXAMINED_WHOLE_IDS) return undefined;
        }
        const text = foldCase(filter.search);
        const lookup = await index.matching(text, SEARCH_COUNT_REACH + 1, (query) => searchStatement(filter, () => searchRows(query.compile(db))));
        if (lookup === undefined) return undefined;
        if (index.firstUsersFirst > 0) {
          // Text most users hold is found sooner among the first users than through an index that reads
          // every entry of each of its trigrams.
          const first = db
            .selectFrom('users')
            .select(['id', ...SEARCHED_COLUMNS])
            .orderBy('id')
            .limit(index.firstUsersFirst);
          const [held] = await searchStatement(filter, () =>
            searchRows(
              sql<{
                n: number | string;
              }>`select count(*) as n from (select 1 from (${first}) as first where ${containsText(text)} limit ${SEARCH_COUNT_REACH + 1}) as held`.compile(db),
            ),
          );
          if (Number(held!.n) > SEARCH_COUNT_REACH) return { few: false };
        }
        const { matches, checked } = lookup;
        const kept = index.keptMatches;
        const counting: RawBuilder<{ n: number | string; kept?: string }> = kept ? kept.read(matches) : sql`select count(*) as n from ${matches} as m`;
        const [counted] = await searchStatement(filter, () => searchRows(counting.compile(db)));
        const count = Number(counted!.n);
        if (count > SEARCH_COUNT_REACH) return { few: false };
        if (checked !== undefined) {
          const [users] = await searchStatement(filter, () =>
            searchRows(sql<{ n: number | string }>`select count(*) as n from ${checked.ids} as c`.compile(db)),
          );
          // As many users to check as the index checks at most: those that hold the text may be more.
          if (Number(users!.n) >= checked.reach) return undefined;
        }
        if (!kept) return { few: true, matches, count };
        // PostgreSQL's array text, `{3,17,40}`: read once here, so that each slice is sent its own ids.
        const ids = kept.byId === undefined ? undefined : counted!.kept === '{}' ? [] : counted!.kept!.slice(1, -1).split(',').map(Number);
        return { few: true, matches: kept.set(counted!.kept!), ids, count };
      })();
      looked.set(filter, found);
    }
    return found;
  }

  /** The users a search reads from the index: all its matches when they are few; otherwise it examines users in order. */
  async function matchesOf(filter: UserFilter): Promise<Matching | undefined> {
    const found = await lookUp(filter);
    return found?.few ? found : undefined;
  }

  /** The users a query in `order` reads: all of them, or only those the index matched (read from the index first). */
  const source = (matching: Matching | undefined, order: UserOrder): UserSelect<object> => {
    if (matching === undefined) return db.selectFrom('users');
    const { matches } = matching;
    // In id order, read along the primary key until the page is full (from a set the store reads in order),
    // rather than joining every match to the users and sorting them.
    if (inIdOrder(order) && index?.pagesByIdFromSet) {
      return db.selectFrom('users').where('users.id', 'in', sql<number>`(select match_id from ${matches} as m)`);
    }
    // CROSS JOIN keeps SQLite from reading users along a sort's index and looking each up in the matches.
    return db.selectFrom(matches.as('m')).crossJoin('users').whereRef('users.id', '=', 'm.match_id') as unknown as UserSelect<object>;
  };

  /** Users of the filter's address, beyond `from` in the order (read backwards if asked); only the index's matches if given. */
  const candidates = (filter: UserFilter, order: UserOrder, from: OrderKeys | undefined, backwards: boolean, matching?: Matching) => {
    const query = byEmail(source(matching, order), filter);
    if (from !== undefined)
      return sorted(
        query.where((eb) => beyond(eb, order, from, backwards)),
        order,
        backwards,
      );
    // From the start, a bound that holds for every row still leads SQLite to the first field's index: it then
    // sorts only the users that tie on that field, and stops at the limit. Without it, a sort by last and
    // first name would sort every user for every page.
    const first = COLUMN[order[0]!.field];
    return sorted(first === 'id' ? query : query.where(first, '>=', ''), order, backwards);
  };

  /**
   * A search's matches in id order from a position, read a slice of their kept ids per statement (`batch` of
   * them, each statement sent only its own). A user deleted since the search began is missing from its
   * slice, and the list goes on after it.
   */
  async function* idSlices(
    filter: UserFilter,
    order: UserOrder,
    ids: readonly number[],
    from: OrderKeys | undefined,
    backwards: boolean,
    batch: number,
  ): AsyncGenerator<Stretch> {
    const byId = index!.keptMatches!.byId!;
    const descending = order[0]!.descending !== backwards;
    // Where the next slice starts in the ids (ascending): reading up, at the first id beyond `from`; reading
    // down, it ends before the first id at or beyond it.
    let at = from === undefined ? (descending ? ids.length : 0) : firstBeyond(ids, Number(from[0]), descending);
    for (;;) {
      const slice = descending ? ids.slice(Math.max(0, at - batch), at) : ids.slice(at, at + batch);
      at += descending ? -slice.length : slice.length;
      const statement = () => sorted(db.selectFrom('users').where(byId(slice)), order, backwards).select(LISTED_COLUMNS);
      const users = slice.length === 0 ? [] : (await searchStatement(filter, () => searchRows(statement().compile()))).map(toListedUser);
      if (descending ? at === 0 : at === ids.length) {
        yield { users };
        return;
      }
      yield { users, until: [descending ? slice[0]! : slice[slice.length - 1]!] };
    }
  }

  /**
   * Store time a read may spend examining users one by one, and what it has spent. A statement starts only
   * while some is left, and the first always does, so that every read makes progress.
   */
  type Budget = { readonly ms: number; spent: number };
  const budgetMs = options.searchBudgetMs ?? SEARCH_BUDGET_MS;
  const newBudget = (share = 1): Budget => ({ ms: budgetMs * share, spent: 0 });
  /** One statement of a search that examines users one by one, its time taken from the budget. */
  const examining = <T>(filter: UserFilter, budget: Budget | undefined, statement: () => Promise<T>) =>
    searchStatement(filter, async () => {
      const started = performance.now();
      try {
        return await statement();
      } finally {
        if (budget) budget.spent += performance.now() - started;
      }
    });

  /**
   * The rows that match, in order from a position, a stretch per statement (a stretch may hold no user when a
   * search found nothing among the users it examined), each with the keys of the last user its statement
   * examined (none when the list ends there). Without a search a statement reads `batch` matches; with one
   * it examines SEARCH_SCAN_ROWS users in order and keeps those that match, and stops once `budget` is spent.
   */
  async function* walk(filter: UserFilter, order: UserOrder, position: ListPosition | undefined, batch: number, budget?: Budget): AsyncGenerator<Stretch> {
    const backwards = position !== undefined && 'before' in position;
    let from: OrderKeys | undefined =
      position === undefined ? undefined : 'after' in position ? position.after : position.before === 'end' ? undefined : position.before;
    const search = filter.search;
    const matching = search === undefined ? undefined : await matchesOf(filter);
    if (matching?.ids !== undefined && inIdOrder(order)) {
      yield* idSlices(filter, order, matching.ids, from, backwards, batch);
      return;
    }
    for (let first = true; ; first = false) {
      if (search === undefined || matching !== undefined) {
        // The index's matches hold the text already: only their order and the position are left to apply.
        const statement = () => candidates(filter, order, from, backwards, matching).select(LISTED_COLUMNS).limit(batch);
        if (matching === undefined && !first) await nextTurn();
        const users = (
          matching !== undefined ? await searchStatement(filter, () => searchRows(statement().compile())) : await guard(() => storeRows(statement))
        ).map(toListedUser);
        if (users.length < batch) {
          yield { users };
          return;
        }
        from = keysOf(users[users.length - 1]!, order);
        yield { users, until: from };
      } else {
        if (!first && budget && budget.spent >= budget.ms) return;
        // The users it examines, by the id and the folded copies alone, which the order's index holds
        // (migration 2026-11-25-03): only the users that match are read from the table, for what the list
        // shows, rather than every user examined.
        const examined = candidates(filter, order, from, backwards)
          .select(['id', ...SEARCHED_COLUMNS])
          .limit(SEARCH_SCAN_ROWS);
        const inOrder = sql.join(
          order.map((key) => sql`${sql.ref(`examined.${COLUMN[key.field]}`)} ${sql.raw(key.descending !== backwards ? 'desc' : 'asc')}`),
        );
        // The users it found, at most a batch (text most users hold fills a page from the first few it
        // examines, and need not read the rest from the table), and where the next statement starts: after the
        // last of them if the batch is full, else after the last user it examined; in one turn.
        const [found, last] = await examining(filter, budget, async () => {
          const shown = await searchRows(
            sql<ListedRow>`
            select shown.id, shown.first_name, shown.last_name, shown.email from (${examined}) as examined cross join users as shown
            where shown.id = examined.id and ${containsText(search, 'examined')} order by ${inOrder} limit ${batch}`.compile(db),
          );
          const users = shown.map(toListedUser);
          if (users.length === batch) return [users, keysOf(users[batch - 1]!, order)] as const;
          // The batch is not full: the next statement starts after the last user this one examined, whatever the text.
          const lastStatement = () =>
            candidates(filter, order, from, backwards)
              .select(['id', 'email_key', 'first_name_key', 'last_name_key'])
              .offset(SEARCH_SCAN_ROWS - 1)
              .limit(1);
          const [lastExamined] = await storeRows(lastStatement);
          return [users, lastExamined && keysOfRow(lastExamined, order)] as const;
        });
        if (last === undefined) {
          yield { users: found };
          return;
        }
        from = last;
        yield { users: found, until: from };
      }
    }
  }

  /**
   * Up to `limit` matching rows from a position, after skipping `skip` of them (in the order, even when read
   * backwards); and where the read stopped, if its budget ran out before it found them all.
   */
  async function take(filter: UserFilter, order: UserOrder, position: ListPosition | undefined, limit: number, skip = 0): Promise<UserSlice> {
    const rows: ListedUser[] = [];
    let skipped = 0;
    let stoppedAt: OrderKeys | undefined;
    for await (const { users, until } of walk(filter, order, position, limit + skip, newBudget())) {
      for (const row of users) {
        if (skipped < skip) skipped++;
        else if (rows.push(row) === limit) break;
      }
      if (rows.length === limit) break;
      stoppedAt = until;
    }
    const users = position !== undefined && 'before' in position ? rows.reverse() : rows;
    return rows.length < limit && stoppedAt !== undefined ? { users, stoppedAt } : { users };
  }

  return {
    walk,
    /** Up to `limit` users that match, from a position (or the start). */
    listFrom: (filter: UserFilter, order: UserOrder, position: ListPosition | undefined, limit: number) => take(filter, order, position, limit),
    /** Up to `limit` users that match, after skipping `offset` of them: a page picked by number. */
    async listAt(filter: UserFilter, order: UserOrder, offset: number, limit: number): Promise<UserSlice> {
      // Without a search the store skips rows itself, along an index; a search has to examine each user.
      if (filter.search === undefined) {
        const statement = () => candidates(filter, order, undefined, false).select(LISTED_COLUMNS).limit(limit).offset(offset);
        return { users: (await guard(() => storeRows(statement))).map(toListedUser) };
      }
      return take(filter, order, undefined, limit, offset);
    },
    /**
     * How many users match a filter that is not empty. A search counts up to SEARCH_COUNT_REACH, and where
     * it examines users one by one, no longer than its budget: a count cut short is not exact.
     */
    async countMatching(filter: UserFilter): Promise<Tally> {
      if (filter.search === undefined) {
        const statement = () => byEmail(db.selectFrom('users'), filter).select((eb) => eb.fn.countAll<number | string>().as('n'));
        const [{ n }] = (await guard(() => storeRows(statement))) as [{ n: number | string }];
        return { total: Number(n), exact: true };
      }
      const found = await lookUp(filter);
      if (found !== undefined) return found.few ? searchTally(found.count) : searchTally(SEARCH_COUNT_REACH + 1);
      const search = filter.search;
      const budget = newBudget(1 / 2);
      let total = 0;
      for (let after = 0; ; ) {
        const examined = byEmail(db.selectFrom('users'), filter)
          .select(['id', ...SEARCHED_COLUMNS])
          .where('id', '>', after)
          .orderBy('id')
          .limit(COUNT_SCAN_ROWS)
          .as('examined');
        const [{ last, n, users }] = (await examining(filter, budget, () =>
          searchRows(
            db
              .selectFrom(examined)
              .select((eb) => [
                eb.fn.max('id').as('last'),
                eb.fn.sum<number | string | null>(eb.case().when(containsText(search)).then(1).else(0).end()).as('n'),
                eb.fn.countAll<number | string>().as('users'),
              ])
              .compile(),
          ),
        )) as [{ last: number | null; n: number | string | null; users: number | string }];
        if (last === null || last === undefined) return { total, exact: true };
        total += Number(n ?? 0);
        // Common text is found soon: counting stops where its count reaches as far as a search counts.
        if (total > SEARCH_COUNT_REACH) return searchTally(total);
        // Fewer users than a statement examines: these were the last (no statement more to find none).
        if (Number(users) < COUNT_SCAN_ROWS) return { total, exact: true };
        if (budget.spent >= budget.ms) return { total, exact: false, stoppedShort: true };
        after = Number(last);
      }
    },
  };
}
