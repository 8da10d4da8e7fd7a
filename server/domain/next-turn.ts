/**
 * Resolves on a later turn of the event loop. Long work over a synchronous store (better-sqlite3) only ever
 * awaits promises that are already settled, so without this it never lets another request or a timer run.
 */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
