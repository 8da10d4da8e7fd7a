/** Settings of the brute-force guard. */
export interface ThrottleSettings {
  readonly maxFailures: number;
  readonly windowMs: number;
}

/** Keys tracked at most; the oldest are forgotten first, so a flood of addresses cannot exhaust memory. */
const MAX_TRACKED = 50_000;

/**
 * Counts failed attempts per key in a sliding window. A key with `maxFailures` failures inside the window is
 * refused until the oldest of them leaves the window. In memory, per process: with several processes the
 * effective limit is that many times higher.
 */
export function createAuthThrottle({ maxFailures, windowMs }: ThrottleSettings, now: () => number = Date.now) {
  const failures = new Map<string, number[]>();
  const recent = (key: string) => {
    const since = now() - windowMs;
    const times = (failures.get(key) ?? []).filter((time) => time > since);
    if (times.length === 0) failures.delete(key);
    else failures.set(key, times);
    return times;
  };
  return {
    /** Seconds until the keys may try again, or undefined when none of them is refused. */
    retryAfter(keys: readonly string[]): number | undefined {
      const waits = keys.map(recent).filter((times) => times.length >= maxFailures).map((times) => times[0]! + windowMs - now());
      return waits.length === 0 ? undefined : Math.max(1, Math.ceil(Math.max(...waits) / 1000));
    },
    fail(keys: readonly string[]): void {
      for (const key of keys) {
        const times = [...recent(key), now()].slice(-maxFailures);
        // Re-inserting moves the key to the end of the Map's order: the least recently failing go first.
        failures.delete(key);
        failures.set(key, times);
      }
      for (const key of failures.keys()) {
        if (failures.size <= MAX_TRACKED) break;
        failures.delete(key);
      }
    },
    succeed(key: string): void {
      failures.delete(key);
    },
  };
}

/** The guard createAuthThrottle builds. */
export type AuthThrottle = ReturnType<typeof createAuthThrottle>;
