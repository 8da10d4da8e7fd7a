import type { Kysely } from 'kysely';
import type { Tables } from './tables.js';

// What a write is to the code that writes, whichever store runs it: SQLite's group commit (sqlite/group-commit.ts)
// or PostgreSQL's transactions (postgres/writes.ts).

/**
 * One atomic piece of writing: it runs against the transaction it is handed, and only against it (the
 * store's own handle is busy with that very transaction until it commits).
 */
export type WriteUnit<T> = (trx: Kysely<Tables>) => Promise<T>;

/** How a unit of writes is run. */
export interface WriteOptions {
  /** All its changes commit, or none; without it, the statements of a unit may commit each on its own. */
  readonly atomic?: boolean;
  /**
   * The monotonic time (monotonic-clock.ts) past which the unit must not begin, because its asker will have
   * answered by then: a unit not begun by it fails and is never begun later. Without it, the store's own
   * bound for a wait (the statement timeout from now) applies.
   */
  readonly beginBy?: number;
}

/** Runs a unit of writes; resolves once its changes are durable, at the latest before it resolves. */
export type Write = <T>(work: WriteUnit<T>, options?: WriteOptions) => Promise<T>;

/** A unit not begun by its deadline: refused, and never begun later. */
export const NOT_BEGUN = 'WRITE_NOT_BEGUN';
