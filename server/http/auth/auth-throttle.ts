import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { secondsLeft } from '../limits/bounded-counter.js';
import type { LimiterSettings, Counter } from '../limits/limiter-store.js';

/** Settings of the brute-force guard. */
export interface ThrottleSettings {
  readonly maxFailures: number;
  readonly windowMs: number;
}

// A user name can be kilobytes long: keys hold a fixed-size digest of it, never the name itself. The last name's
// digest is kept: a logged-in client sends the same one with every request.
let lastName: { readonly name: string; readonly digest: string } | undefined;
function nameKey(client: string, username: string): string {
  if (lastName?.name !== username) lastName = { name: username, digest: createHash('sha256').update(username, 'utf8').digest('base64url').slice(0, 22) };
  return `${client} ${lastName.digest}`;
}

/**
 * A point given back this close to the end of its window might land in the next one, and be a guess more
 * there than the budget: it is kept instead.
 */
const GIVE_BACK_MARGIN_MS = 1000;
/** How often an attempt refused while others of its client are under way tries again once they are done. */
const RETRIES = 4;
/** How long such an attempt waits when those others run in other processes, where it cannot see them end. */
const RETRY_PAUSE_MS = 100;
/** How far apart the ends of two refusals' windows may be (the time between a count and its reading) and be one window. */
const WINDOW_TOLERANCE_MS = 10;

/** What a guarded check gave: its result, or a refusal before any check. */
export type Guarded<T> =
  /** `last` when this attempt took the last point of a count (and so, if it failed, began a lockout). */
  | { readonly checked: true; readonly result: T; readonly last: boolean }
  /** Whole seconds until the count that refused the attempt starts over. */
  | { readonly checked: false; readonly retryAfterSeconds: number };

/** What the counts of an attempt's client and user name answered; undefined where the store did not answer. */
interface Held {
  readonly client: string;
  readonly key: string;
  readonly byClient: RateLimiterRes | undefined;
  readonly byName: RateLimiterRes | undefined;
  /** When they were taken (performance.now()), to tell how much of their windows is left. */
  readonly takenAt: number;
}

/** The points one attempt took, from both counts. */
interface Taken extends Held {
  readonly byClient: RateLimiterRes;
  readonly byName: RateLimiterRes;
}

/** The counts a store answered with, taking the point or refusing it; undefined when it failed or did not answer. */
const answered = (outcome: PromiseSettledResult<RateLimiterRes>): RateLimiterRes | undefined =>
  outcome.status === 'fulfilled' ? outcome.value : outcome.reason instanceof RateLimiterRes ? outcome.reason : undefined;

/**
 * Counts credential checks per client, and per user name from that client; either count past `maxFailures`
 * refuses the client until that count's window (which starts at its first attempt) ends. Each attempt takes
 * its point before its check, in one atomic step of the store (consume), so that however many guesses arrive
 * at once, at most `maxFailures` are checked per window: reading the count first and counting after the check
 * would let parallel guesses all through. A failed check keeps its point; a check that did not
 * happen, or was refused, gives it back; a success forgives the client its failures, so that a user who once
 * mistyped is not locked out by the next typo. Points taken by checks still under way
 * are not failures: an attempt refused while its client has some tries again when they are done, so that a
 * burst of right logins is not refused for a whole window.
 *
 * Every count lives in the one store the limiters were made for. When it fails or does not answer in time, the
 * attempt is refused before any check (its caller answers 503): the store's error goes up, the points the
 * store did answer for go back to it, and a point it may have taken unseen stays there. Points that cannot be
 * given back, or failures that cannot be forgiven, stay counted: the client has fewer guesses, never more.
 */
export function createAuthThrottle({ maxFailures, windowMs }: ThrottleSettings, createLimiter: (settings: LimiterSettings) => Counter) {
  const settings = { points: maxFailures, durationSeconds: Math.ceil(windowMs / 1000) };
  const perClient = createLimiter({ keyPrefix: 'auth-client', ...settings });
  const perName = createLimiter({ keyPrefix: 'auth-name', ...settings });
  /** This process's checks under way, by client: what a refused attempt of the same client waits for. */
  const underWay = new Map<string, Set<Promise<unknown>>>();
  /** This process's attempts under way, by client, from taking their points until they are settled. */
  const attempts = new Map<string, number>();

  /**
   * Takes one point from both counts; the counts if both had one, else the refusals (and the points are given
   * back). Rejects with the store's error when it failed to answer for either count.
   */
  async function take(client: string, key: string): Promise<{ taken: Taken } | { refused: RateLimiterRes[] }> {
    const takenAt = performance.now();
    const outcomes = await Promise.allSettled([perClient.consume(client), perName.consume(key)]);
    const [byClient, byName] = outcomes.map(answered);
    if (outcomes.every((outcome) => outcome.status === 'fulfilled')) return { taken: { client, key, byClient: byClient!, byName: byName!, takenAt } };
    // A refused attempt is no guess either: left in the counts, refusals would keep them past the limit
    // after the failures that put them there were forgiven. Nor is one whose store could not count it; its
    // refusal does not wait for that give-back, which may wait out a timeout of its own.
    const given = giveBack({ client, key, byClient, byName, takenAt });
    const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected' && answered(outcome) === undefined);
    if (failed) throw failed.reason;
    await given;
    return { refused: outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as RateLimiterRes] : [])) };
  }

  /** Resolves when this process's checks of the client now under way are done, or after a pause if there are none. */
  const othersDone = (client: string) => {
    const checks = underWay.get(client);
    return checks === undefined ? sleep(RETRY_PAUSE_MS) : Promise.allSettled(checks);
  };

  /**
   * Forgives the client every failure. The service has one credential, so a client that proved it holds it
   * gains nothing by guessing: forgiving only this user name's failures, by moving points between counts
   * that parallel attempts change meanwhile, left the client's count too high or too low.
   */
  async function forgive(client: string, key: string): Promise<void> {
    await Promise.allSettled([perClient.delete(client), perName.delete(key)]);
  }

  /**
   * Gives back the points an attempt took, unless a count's window is about to end. A count that went below
   * zero no longer held the point: a success forgave the client (deleted its counts) since it was taken, and
   * the reward made a count of -1, a guess past the budget. That give-back is undone; each undoes only its
   * own, so however many land around one forgiveness the count ends where the attempts left it.
   */
  async function giveBack({ client, key, byClient, byName, takenAt }: Held): Promise<void> {
    const keep = (count: RateLimiterRes) => count.msBeforeNext - (performance.now() - takenAt) <= GIVE_BACK_MARGIN_MS;
    const giveTo = async (counter: Counter, name: string, count: RateLimiterRes | undefined) => {
      if (count === undefined || keep(count)) return;
      if ((await counter.reward(name, 1)).consumedPoints < 0) await counter.penalty(name);
    };
    await Promise.allSettled([giveTo(perClient, client, byClient), giveTo(perName, key, byName)]);
  }

  /** Runs the check, its point taken, and settles the point by its outcome. */
  async function settled<T>(taken: Taken, check: () => Promise<T>, succeeded: (result: T) => boolean) {
    let result: T;
    try {
      result = await check();
    } catch (error) {
      // Refused by the hash gate (or failed) before any answer: the attempt was no guess.
      await giveBack(taken);
      throw error;
    }
    if (succeeded(result)) await forgive(taken.client, taken.key);
    return result;
  }

  /**
   * Takes the attempt's points, until the counts give them or refuse for good, and runs the check with them;
   * the attempt of guard once it has its place.
   */
  async function attempt<T>(client: string, key: string, check: () => Promise<T>, succeeded: (result: T) => boolean): Promise<Guarded<T>> {
    /** When the window of this attempt's last refusal ends (ms since the epoch). */
    let refusedUntil = -Infinity;
    for (let round = 0; ; round++) {
      const outcome = await take(client, key);
      if ('refused' in outcome) {
        // Tries again while this process has checks of the client under way, and once (after a pause) for
        // those of other processes; a client past its budget then costs the store a few statements, not more.
        // A refusal in a window that began since the last one is no such client's: a right attempt (in any
        // process) forgave the client meanwhile, and the points it was refused for are attempts under way again.
        const until = Date.now() + Math.max(...outcome.refused.map((count) => count.msBeforeNext));
        const restarted = round > 0 && until > refusedUntil + WINDOW_TOLERANCE_MS;
        refusedUntil = until;
        if (round === RETRIES || (round > 0 && !restarted && !underWay.has(client)))
          return { checked: false, retryAfterSeconds: Math.max(...outcome.refused.map(secondsLeft)) };
        await othersDone(client);
        continue;
      }
      const running = settled(outcome.taken, check, succeeded);
      const checks = underWay.get(client) ?? new Set();
      underWay.set(client, checks.add(running));
      try {
        const result = await running;
        return { checked: true, result, last: [outcome.taken.byClient, outcome.taken.byName].some((count) => count.consumedPoints === maxFailures) };
      } finally {
        checks.delete(running);
        if (checks.size === 0) underWay.delete(client);
      }
    }
  }

  return {
    /**
     * Whether neither count of the client and user name holds a point: no failure to forgive, no lockout, no
     * check under way. A credential known to be right then needs neither a point nor a check: its answer is
     * the same as after them, and reading the counts writes nothing to a shared store.
     */
    async clear(client: string, username: string): Promise<boolean> {
      const counts = await Promise.all([perClient.get(client), perName.get(nameKey(client, username))]);
      return counts.every((count) => count === null || count.consumedPoints <= 0);
    },
    /**
     * Runs a credential check of a client and user name if their budget allows it: `succeeded` tells a
     * right credential from a wrong one.
     */
    async guard<T>(client: string, username: string, check: () => Promise<T>, succeeded: (result: T) => boolean): Promise<Guarded<T>> {
      // With as many attempts of the client under way here as its budget holds, one more could be checked only
      // once one of them turned out right, and it would wait for them. Refused at once, it costs the store
      // nothing: a burst of one client's guesses cannot take the connections of the counts from other clients.
      const under = attempts.get(client) ?? 0;
      if (under >= maxFailures) return { checked: false, retryAfterSeconds: 1 };
      attempts.set(client, under + 1);
      try {
        return await attempt(client, nameKey(client, username), check, succeeded);
      } finally {
        const left = attempts.get(client)! - 1;
        if (left === 0) attempts.delete(client);
        else attempts.set(client, left);
      }
    },
  };
}

/** The guard createAuthThrottle builds. */
export type AuthThrottle = ReturnType<typeof createAuthThrottle>;
