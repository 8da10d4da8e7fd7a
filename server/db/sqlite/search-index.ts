import { sql } from 'kysely';
import type { IndexLookup, SearchIndex } from '../dialect-support.js';

// How a search reads SQLite's trigram index (FTS5, https://sqlite.org/fts5.html#the_trigram_tokenizer), planned
// per text from how common its trigrams are. What a statement costs is what it reads: FTS5 reads the whole
// entry list of every trigram it is asked about, up to the user where it stops, and a phrase reads their
// positions too. A trigram every user holds ("exa", "com", "las") is the dear part of a large store's search,
// dearer in a phrase than in an AND, and a rare one costs next to nothing. Asking always for the phrase of the
// text's ends would read every common trigram in it, for text that few users hold ("9999@example.com"); asking
// for the two rarest trigrams and checking what they find reads little there, and for text most users hold,
// the phrase stops soon and costs least. What each part cost at 1,000,000 users: docs/benchmarks.md.

/** Characters of a text the exact phrase is asked for at most: 6 trigrams, each read in full at worst. */
const PHRASE_CHARACTERS = 8;

/** Trigrams of a text asked how common they are: evenly spread over it, so a long text costs no more. */
const PROBED_TRIGRAMS = 12;

/**
 * Users a probe reads of one trigram: all of them when fewer hold it; otherwise the id of the last one says
 * how densely users hold it, and so about how many do.
 */
const PROBE_READS = 1024;

/**
 * Users the rarest trigrams may find that a search checks against the whole text, at most (about 20 ms at
 * 1,000,000 users). Where they find more and fewer of them hold the text than a search counts, the index
 * cannot answer within this bound: the search examines users in order under its time budget instead, as it
 * does for text too short for the index (see user-lists.ts).
 */
export const CHECKED_CANDIDATES = 20_000;

/** Cost of reading one entry of a trigram in a phrase, in an AND, and of checking one user, in the same unit (their ratios as measured: docs/benchmarks.md). */
const PHRASE_ENTRY = 2;
const AND_ENTRY = 1;
const CHECKED_USER = 200;

/** An FTS5 phrase: the text exactly, its double quotes doubled (https://sqlite.org/fts5.html#fts5_strings). */
const phrase = (text: string) => `"${text.replaceAll('"', '""')}"`;

/** The distinct trigrams of a text, in the order they first occur. */
export function trigramsOf(text: string): string[] {
  const characters = [...text];
  const trigrams = new Set<string>();
  for (let i = 0; i + 3 <= characters.length; i++) trigrams.add(characters.slice(i, i + 3).join(''));
  return [...trigrams];
}

/** At most `most` of `items`, evenly spread, the first and the last among them. */
export function spread<T>(items: readonly T[], most: number): T[] {
  if (items.length <= most) return [...items];
  return Array.from({ length: most }, (_, i) => items[Math.round((i * (items.length - 1)) / (most - 1))]!);
}

/** How a search asks the index: the exact phrase of its text, or the rarest trigrams, each user found checked. */
export type SearchPlan = { readonly kind: 'phrase' } | { readonly kind: 'rarest'; readonly trigrams: readonly string[] };

/**
 * The cheaper way to ask for a text, from about how many users hold each of its probed trigrams (`holders`,
 * every trigram of a text of up to PHRASE_CHARACTERS characters): the phrase reads every trigram's entries
 * and needs no check; the two rarest read only theirs, and each user they find is checked.
 */
export function planSearch(text: string, holders: ReadonlyMap<string, number>): SearchPlan {
  const byRarity = [...holders].sort(([, a], [, b]) => a - b);
  const rarest = byRarity.slice(0, 2);
  // Both read up to the same user when the text is common (where `most` matches are found) and the whole
  // index when it is rare: the costs compare alike either way.
  const rarestCost = rarest.reduce((sum, [, n]) => sum + n * AND_ENTRY, 0) + rarest[0]![1] * CHECKED_USER;
  if ([...text].length <= PHRASE_CHARACTERS) {
    const phraseCost = byRarity.reduce((sum, [, n]) => sum + n * PHRASE_ENTRY, 0);
    if (phraseCost <= rarestCost) return { kind: 'phrase' };
  }
  return { kind: 'rarest', trigrams: rarest.map(([trigram]) => trigram) };
}

/** Whether a user's folded names or address hold the text. */
const holds = (text: string) => sql`(instr(users.first_name_key, ${text}) or instr(users.last_name_key, ${text}) or instr(users.email_key, ${text}))`;

/**
 * The SQLite index. A text of one trigram is its own phrase. For a longer one, a first statement reads up to
 * PROBE_READS users of each of up to PROBED_TRIGRAMS of its trigrams, and planSearch picks how to ask.
 */
export const sqliteSearchIndex: SearchIndex = {
  // FTS5 stops reading at `most` matches: the commonest text costs it least.
  firstUsersFirst: 0,
  pagesByIdFromSet: true,
  // As a JSON array SQLite writes and reads itself: one value however many ids, never parsed in JavaScript
  // (https://sqlite.org/json1.html#jgrouparray, #jeach).
  keptMatches: {
    read: (matches) => sql<{ n: number; kept: string }>`select count(*) as n, json_group_array(match_id) as kept from ${matches} as m`,
    set: (kept) => sql<{ match_id: number }>`(select value as match_id from json_each(${kept}))`,
  },
  async matching(text, most, read): Promise<IndexLookup | undefined> {
    const trigrams = trigramsOf(text);
    if (trigrams.length === 0) return undefined;
    const exact = (): IndexLookup => ({
      matches: sql<{ match_id: number }>`(select rowid as match_id from users_search where users_search match ${phrase(text)} limit ${most})`,
    });
    if (trigrams.length === 1) return exact();
    const probed = spread(trigrams, PROBED_TRIGRAMS);
    // One row per trigram: how many of its first PROBE_READS holders there are, and the id of the last; and
    // (i = -1) the highest id, which those ids are a share of.
    const rows = await read(
      sql<{ i: number; n: number; last: number | null }>`select -1 as i, max(id) as n, null as last from users
        ${sql.join(
          probed.map(
            (trigram, i) =>
              sql`union all select ${i}, count(*), max(rowid) from (select rowid from users_search where users_search match ${phrase(trigram)} limit ${PROBE_READS})`,
          ),
          sql` `,
        )}`,
    );
    const top = Number(rows.find((row) => row.i === -1)?.n ?? 0);
    const holders = new Map<string, number>();
    for (const { i, n, last } of rows) {
      if (i < 0) continue;
      holders.set(probed[i]!, n < PROBE_READS || last === null ? n : Math.round((n * Math.max(top, last)) / last));
    }
    const plan = planSearch(text, holders);
    if (plan.kind === 'phrase') return exact();
    const candidates = sql<{
      id: number;
    }>`(select rowid as id from users_search where users_search match ${plan.trigrams.map(phrase).join(' AND ')} limit ${CHECKED_CANDIDATES})`;
    return {
      matches: sql<{
        match_id: number;
      }>`(select users.id as match_id from ${candidates} as held cross join users on users.id = held.id where ${holds(text)} limit ${most})`,
      checked: { ids: candidates, reach: CHECKED_CANDIDATES },
    };
  },
};
