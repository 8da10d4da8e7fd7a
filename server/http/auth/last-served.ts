/**
 * When each key (a client's address block) last had a check run, for at most `capacity` keys: a Map in order of
 * service, so the one served longest ago is forgotten first, and an attacker with ever new addresses costs bounded
 * memory (about 150 bytes a key). A key forgotten, or never served, counts as served longest ago of all.
 */
export function createLastServed(capacity: number, now: () => number = () => performance.now()) {
  const served = new Map<string, number>();
  return {
    /** Notes that `key` has a check run now. */
    serve(key: string): void {
      served.delete(key);
      served.set(key, now());
      if (served.size > capacity) served.delete(served.keys().next().value!);
    },
    /** When `key` last had a check run; -Infinity if never (or forgotten). */
    at: (key: string): number => served.get(key) ?? -Infinity,
  };
}
