import { CHECKED_CANDIDATES, planSearch, spread, trigramsOf } from '../../server/db/sqlite/search-index.js';

// How a search asks SQLite's trigram index (server/db/sqlite/search-index.ts), from how many users hold each
// of its trigrams. The numbers are those of the 1,000,000 users `make bench` writes.

const holders = (entries: Record<string, number>) => new Map(Object.entries(entries));

test('a text is cut into its distinct trigrams, by code point', () => {
  expect(trigramsOf('abcabc')).toEqual(['abc', 'bca', 'cab']);
  expect(trigramsOf('ab')).toEqual([]);
  expect(trigramsOf('a😀bc')).toEqual(['a😀b', '😀bc']);
});

test('a long text is probed at evenly spread trigrams, its first and last among them', () => {
  const items = Array.from({ length: 30 }, (_, i) => i);
  expect(spread(items, 12)).toHaveLength(12);
  expect(spread(items, 12)[0]).toBe(0);
  expect(spread(items, 12)[11]).toBe(29);
  expect(spread([1, 2, 3], 12)).toEqual([1, 2, 3]);
});

test('text whose trigrams most users hold is asked for as its exact phrase, which stops at the first matches', () => {
  const common = { exa: 1_000_000, xam: 1_000_000, amp: 1_000_000, mpl: 1_000_000, ple: 1_000_000 };
  expect(planSearch('example', holders(common))).toEqual({ kind: 'phrase' });
  expect(planSearch('mira99', holders({ mir: 83_408, ira: 83_490, ra9: 18_024, a99: 3_345 }))).toEqual({ kind: 'phrase' });
});

test('text with rare trigrams beside common ones is asked for by its two rarest, not by reading the common ones', () => {
  const last999 = { las: 988_417, ast: 989_372, st9: 110_775, t99: 11_131, '999': 5_122 };
  expect(planSearch('last999', holders(last999))).toEqual({ kind: 'rarest', trigrams: ['999', 't99'] });
});

test('text longer than the phrase asked for is always asked for by its rarest trigrams', () => {
  const probed = { '999': 5_122, '99@': 9_999, '9@e': 99_883, '@ex': 1_000_000, exa: 1_000_000, com: 1_000_000 };
  expect(planSearch('9999@example.com', holders(probed))).toEqual({ kind: 'rarest', trigrams: ['999', '99@'] });
  expect(CHECKED_CANDIDATES).toBeGreaterThan(10_000);
});
