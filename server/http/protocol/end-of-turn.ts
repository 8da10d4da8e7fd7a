/**
 * Resolves at the end of this turn of the event loop, in its check phase, after the I/O the turn read: one
 * promise for every caller of a turn. Replies of reads wait for it, so that a turn's replies go out together
 * rather than one between each two reads: on loopback each reply written between reads wakes the client on
 * the other core, and a turn's replies wake it once (measured in docs/decisions/reply-cache.md).
 */
export function endOfTurn(): Promise<void> {
  return (turn ??= new Promise<void>((resolve) =>
    setImmediate(() => {
      turn = undefined;
      resolve();
    }),
  ));
}

let turn: Promise<void> | undefined;
