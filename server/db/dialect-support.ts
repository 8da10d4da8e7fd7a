import type { CompiledQuery, Dialect, Kysely, RawBuilder, SqlBool } from 'kysely';
import type { SharedCounts } from './postgres/counts.js';
import type { SqlDialect } from './migrations/dialect.js';
import type { Tables } from './tables.js';
import type { Write } from './write.js';

// What each dialect's folder (sqlite/, postgres/) supplies to open a store, and the reads it offers.

/**
 * A trigram index of the users' folded names and addresses (the text of a search is folded too). A search
 * asks it for the users that hold its text, at most a number of them: the index narrows the users by a few
 * trigrams (so that a lookup reads the entries of few trigrams, whatever the text), and where that is not
 * exact, each user it finds is checked against the whole text.
 */
export interface SearchIndex {
  /**
   * How to read the users whose folded names or address hold the folded text, at most `most` of them;
   * undefined when the index cannot narrow the text (too short). `read` runs a statement the index asks first,
   * to plan the lookup (SQLite asks how common the text's trigrams are).
   */
  matching(text: string, most: number, read: <R>(query: RawBuilder<R>) => Promise<readonly R[]>): Promise<IndexLookup | undefined>;
  /**
   * Users to read in order, before asking the index, for more than SEARCH_COUNT_REACH that hold the text
   * (0: none). An index that reads every entry of each trigram it is asked about (PostgreSQL's GIN) costs most
   * for the text that most users hold, which is found sooner so.
   */
  readonly firstUsersFirst: number;
  /**
   * Whether a list by id takes the matches as a set (`id in`): SQLite reads such a set in id order and looks
   * users up only until the page is full. Otherwise the matches are all joined to the users and sorted (a
   * planner may walk the whole primary key testing each user against a set, as PostgreSQL's can).
   */
  readonly pagesByIdFromSet: boolean;
  /**
   * Where a search reads the index's matches once and keeps them: a page then reads users by id from the
   * kept set rather than looking them up in the index again (on SQLite, checking the users found by the
   * rarest trigrams would cost the page as much again as the count). `read` counts the matches and gives
   * them as one value, `set` is a subquery of the ids (`match_id`) in it.
   */
  readonly keptMatches?: {
    read(matches: RawBuilder<{ match_id: number }>): RawBuilder<{ n: number; kept: string }>;
    set(kept: string): RawBuilder<{ match_id: number }>;
    /**
     * Where `read` gives the ids in ascending order, a condition on `users.id` that holds for the given ids
     * alone: a list by id reads its matches a slice of kept ids per statement, along the primary key. Joined to
     * the users, the set leads PostgreSQL's planner to walk the primary key from the page's start, testing
     * every user against the set; and the whole set, sent with each statement, costs more to read than its rows.
     */
    byId?(ids: readonly number[]): RawBuilder<SqlBool>;
  };
}

/** What the index found for a text. */
export interface IndexLookup {
  /** A subquery of the ids (`match_id`) of users that hold the text, at most the number asked for, in no particular order. */
  readonly matches: RawBuilder<{ match_id: number }>;
  /**
   * The users the index checks one by one against the text, at most `reach` of them, where it checks them.
   * If there are `reach` and the matches are no more than were asked for, they may be incomplete: the index
   * cannot answer within its bound.
   */
  readonly checked?: { readonly ids: RawBuilder<{ id: number }>; readonly reach: number };
}

/** The SQLite reader: its selects, and the version they read. */
export interface SqliteReader {
  /** Runs a select at once and gives its rows. */
  readonly read: <Row>(query: CompiledQuery<Row>) => Row[];
  readonly storeVersion: () => number;
  close(): void;
}

/** What a dialect supplies: its Kysely dialect, how it migrates, writes, searches, reads and tells outages. */
export interface DialectSupport {
  readonly dialect: Dialect;
  /** A dialect of its own for migrations, whose statements may take longer than requests' (undefined: `dialect`'s). */
  migrationDialect?(): Dialect;
  /**
   * Whether the migrations, the migration lock included, run in one transaction the service opens. Kysely
   * takes a session's advisory lock, then runs the migrations in a transaction, then unlocks: three
   * statements that a pooler in transaction mode may send through three server sessions, leaving the lock
   * held in one that other clients then get. Inside one transaction all of it is one server session, and
   * the lock is released before the commit. (SQLite's DDL is not transactional in Kysely's terms.)
   */
  readonly migratesInOneTransaction: boolean;
  /** The dialect the migrations write for. */
  readonly kind: SqlDialect;
  outage(error: unknown): string | undefined;
  /** Checks beyond `select 1` that tell whether writes would succeed. */
  checkRoom(): Promise<void>;
  /** How units of writes run: in a transaction each, or committed together. */
  writer(db: Kysely<Tables>): Write;
  /** Schema that holds Kysely's migration tables, when the dialect has schemas. */
  migrationSchema(db: Kysely<Tables>): Promise<string | undefined>;
  readonly sharedCounters: SharedCounts | undefined;
  /** The substring index, once the schema is migrated (PostgreSQL's exists only where pg_trgm could be had). */
  searchIndex(db: Kysely<Tables>): Promise<SearchIndex | undefined>;
  readonly searchConnections: number;
  /** Opens the store's reader (see Database.read), once the schema is migrated; undefined: none. */
  reader(): SqliteReader | undefined;
}
