/** setImmediate where the runtime has it (Node); a zero timeout in browsers, where the MSW handlers run. */
const schedule: (callback: () => void) => unknown =
  (globalThis as { setImmediate?: (callback: () => void) => unknown }).setImmediate ?? ((callback) => setTimeout(callback, 0));

/**
 * Resolves on a later turn of the event loop. Long work over a synchronous store (better-sqlite3) only ever
 * awaits promises that are already settled, so without this it never lets another request or a timer run.
 */
export const nextTurn = (): Promise<void> => new Promise((resolve) => schedule(resolve));
