// Replies whose content depends on how fast the store answered, not on the store and the request alone: a
// search that stopped when its store time ran out (SEARCH_BUDGET_MS) found what it could in that time, and
// the same request may find more. The router keeps no such reply (server/http/reply-cache/); every other
// reply of a kept operation is a function of the store and its request target.

const boundByTime = new WeakSet<object>();

/** Marks a reply made of reads that stopped when their store time ran out, if any did; returns it. */
export function timeBound<R extends object>(reply: R, stoppedShort: boolean): R {
  if (stoppedShort) boundByTime.add(reply);
  return reply;
}

/** Whether a reply was made of reads that stopped when their store time ran out (timeBound). */
export const isTimeBound = (reply: object): boolean => boundByTime.has(reply);
