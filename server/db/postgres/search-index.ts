import { sql, type SqlBool } from 'kysely';
import type { SearchIndex } from '../dialect-support.js';

// How a search reads PostgreSQL's trigram index (pg_trgm's GIN, https://www.postgresql.org/docs/current/pgtrgm.html)
// through users_matching() (migration 2026-11-25-02), which reads the users a key narrows to and keeps those
// that hold the text.

/** Trigrams of a search the PostgreSQL index is asked about: enough to narrow it, few enough to read quickly. */
const POSTGRES_KEY_TRIGRAMS = 6;
/** And trigrams of the starts of its words of one or two characters, beside those (postgresSearchKey). */
const POSTGRES_KEY_WORD_STARTS = 2;

/**
 * The key of a search: a LIKE pattern made of the runs of letters and digits in its text (pg_trgm takes text
 * apart into words of those), cut so that they hold at most POSTGRES_KEY_TRIGRAMS trigrams, and joined by
 * `%`: `%user1234%` for "user12345", `%example%com%` for "example.com". A run of one or two characters that
 * follows another character of the text (a word's start, which pg_trgm reads as a trigram of its own, "  9")
 * goes in with that character: `%castella%.9%` for ".castellan.9", which narrows to the users whose word
 * after "castellan" starts with 9 instead of every Castellan. Every user the search matches holds the key, as
 * its pieces stand in the text in order. GIN reads the entries of all its trigrams at once and keeps only the
 * users that hold every one, skipping through the longer lists, so no one trigram needs to be rare; the
 * trigrams that every user holds are what the key costs, hence POSTGRES_KEY_TRIGRAMS at most. Undefined when
 * the text has no run of three letters or digits, which the index cannot narrow.
 */
export function postgresSearchKey(text: string): string | undefined {
  const pieces: string[] = [];
  let [words, starts] = [POSTGRES_KEY_TRIGRAMS, POSTGRES_KEY_WORD_STARTS];
  for (const { 0: run, index } of text.matchAll(/[a-z0-9]+/g)) {
    if (run.length >= 3) {
      if (words === 0) continue;
      const piece = run.slice(0, words + 2);
      pieces.push(piece);
      words -= piece.length - 2;
      continue;
    }
    // Only after a character pg_trgm takes words apart at, as it does at every other ASCII character.
    const before = text[index - 1];
    if (starts === 0 || before === undefined || /[^\x20-\x7e]/.test(before)) continue;
    pieces.push(`${before.replace(/[\\%_]/, '\\$&')}${run.slice(0, starts)}`);
    starts -= Math.min(run.length, starts);
  }
  return words < POSTGRES_KEY_TRIGRAMS ? `%${pieces.join('%')}%` : undefined;
}

/** users_matching() (migration 2026-11-25-02) reads through the GIN index and stops at `most` users that hold the text. */
export const postgresSearchIndex: SearchIndex = {
  // GIN reads every entry of each trigram it is asked about, so text most users hold is counted faster among
  // the first users than through the index. Text that fewer than half the first 20,000 users hold goes to the
  // index. Timed at 1,000,000 users: docs/benchmarks.md.
  firstUsersFirst: 20_000,
  pagesByIdFromSet: false,
  // As an array PostgreSQL writes and reads itself: one value however many ids. Each slice of a list reads
  // the kept ids rather than running users_matching() again, which examines every user its key narrows to;
  // a slice by id is sent only its own ids.
  keptMatches: {
    read: (matches) =>
      sql<{ n: number; kept: string }>`select count(*) as n, coalesce(array_agg(match_id order by match_id), '{}')::text as kept from ${matches} as m`,
    set: (kept) => sql<{ match_id: number }>`(select unnest(${kept}::integer[]) as match_id)`,
    byId: (ids) => sql<SqlBool>`users.id = any(${`{${ids.join(',')}}`}::integer[])`,
  },
  async matching(text, most) {
    const key = postgresSearchKey(text);
    return key === undefined ? undefined : { matches: sql<{ match_id: number }>`(select match_id from users_matching(${key}, ${text}, ${most}))` };
  },
};
