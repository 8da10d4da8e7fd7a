// What a list's statements may cost, however large the store (user-lists.ts): a statement that searches
// examines at most SEARCH_SCAN_ROWS users, and a turn of the event loop starts SEARCHES_PER_TURN such
// statements, and more only within SEARCH_TURN_MS of its start, however many searches are under way
// (search-turnstile.ts). A search of 1,000,000 users on SQLite (whose statements run on the event loop) then
// never stalls other requests; on PostgreSQL, searches hold at most half the pool's connections
// (Database.searchConnections), so the rest never wait for them.

/** Users a search examines per statement: about a millisecond of SQLite's time, read from the order's index. */
export const SEARCH_SCAN_ROWS = 4000;
/** Users a count of matches examines per statement: about a millisecond of SQLite's time. */
export const COUNT_SCAN_ROWS = 4000;
/**
 * Searching statements a turn of the event loop starts (more follow only within SEARCH_TURN_MS of its start),
 * however many searches are under way: what other requests wait for in a turn does not grow with their number.
 */
export const SEARCHES_PER_TURN = 4;
/**
 * Highest id of a store whose searches examine every user rather than ask the substring index, where the
 * store says at once (Database.read): so small a store is examined whole for less than the index's four
 * statements cost (how common its trigrams are; the matches; those that hold it all; the page). Timed in the
 * process: docs/benchmarks.md.
 */
export const EXAMINED_WHOLE_IDS = 500;
