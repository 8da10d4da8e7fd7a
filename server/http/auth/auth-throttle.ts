import { createHash } from 'node:crypto';
import type { LimiterSettings, Counter } from '../limits/limiter-store.js';

/** Settings of the brute-force guard. */
export interface ThrottleSettings {
  readonly maxFailures: number;
  readonly windowMs: number;
}

// A user name can be kilobytes long: keys hold a fixed-size digest of it, never the name itself.
const nameKey = (client: string, username: string) => `${client} ${createHash('sha256').update(username, 'utf8').digest('base64url').slice(0, 22)}`;

/**
 * Counts failed credential checks per client, and per user name from that client. Either count reaching
 * `maxFailures` refuses the client until that count's window (which starts at its first failure) ends.
 * A success forgives what this client did wrong with this user name, in both counts, so a user who once
 * mistyped is not locked out by the next typo.
 */
export function createAuthThrottle({ maxFailures, windowMs }: ThrottleSettings, createLimiter: (settings: LimiterSettings) => Counter) {
  const settings = { points: maxFailures, durationSeconds: Math.ceil(windowMs / 1000) };
  const perClient = createLimiter({ keyPrefix: 'auth-client', ...settings });
  const perName = createLimiter({ keyPrefix: 'auth-name', ...settings });
  return {
    /** Seconds until the client may try this user name again, or undefined when it may now. */
    async retryAfter(client: string, username: string): Promise<number | undefined> {
      const counts = await Promise.all([perClient.get(client), perName.get(nameKey(client, username))]);
      const waits = counts.filter((count) => count !== null && count.consumedPoints >= maxFailures).map((count) => count!.msBeforeNext);
      return waits.length === 0 ? undefined : Math.max(1, Math.ceil(Math.max(...waits) / 1000));
    },
    /** Counts a failure; true when it was the one that reached the limit (worth a log line, once). */
    async fail(client: string, username: string): Promise<boolean> {
      const [byClient, byName] = await Promise.all([perClient.penalty(client), perName.penalty(nameKey(client, username))]);
      return byClient.consumedPoints === maxFailures || byName.consumedPoints === maxFailures;
    },
    async succeed(client: string, username: string): Promise<void> {
      const key = nameKey(client, username);
      const byName = await perName.get(key);
      // On a shared store another process may be forgiving the same count at this moment: the one whose
      // delete removed it forgives, once.
      if (byName === null || !(await perName.delete(key))) return;
      const byClient = await perClient.reward(client, byName.consumedPoints);
      // Rewarding a count that expired (or that another success reduced) leaves it negative: a budget beyond
      // the limit. Deleting it starts the client from zero instead.
      if (byClient.consumedPoints < 0) await perClient.delete(client);
    },
  };
}

/** The guard createAuthThrottle builds. */
export type AuthThrottle = ReturnType<typeof createAuthThrottle>;
