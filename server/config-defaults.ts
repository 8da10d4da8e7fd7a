// What code outside config.ts reads of the settings, written once here: defaults the store's lists and the kit
// fall back on, the shape of the sandbox's latency, and how the npx sandbox parses the flags it shares with
// the settings. The kit runs in browsers and cannot load config.ts, which reads the process's environment:
// this file imports nothing.

/** Largest request body accepted unless configured (BODY_LIMIT_BYTES): 64 KiB. */
export const DEFAULT_BODY_LIMIT_BYTES = 65_536;

/**
 * Store time, unless configured (SEARCH_BUDGET_MS), that a page of a search may spend examining users one by
 * one (text the substring index cannot narrow, or more matches than it counts), and half of it for its count.
 * A page it could not fill in that time comes back with the users it found and a link that goes on from where
 * it stopped; a count says how many it found, as a count that is not exact. Every request then costs a
 * bounded amount of the store's time (about 100 ms at 1,000,000 users, with the HTTP around it), however
 * large the store and however rare the text.
 */
export const SEARCH_BUDGET_MS = 50;

/** The delays the sandbox adds to answers (SANDBOX_LATENCY_MS): milliseconds, drawn evenly from `min` to `max` for each. */
export interface LatencyRange {
  readonly min: number;
  readonly max: number;
}

/**
 * Searches that may wait for their turn, unless configured (SEARCH_QUEUE); one more is refused (503,
 * Retry-After) rather than queued without end.
 */
export const SEARCHES_WAITING = 256;

/** Refuses a setting's text: the reason is what a start shows after the variable's name. */
export const refuse = (reason: string): never => {
  throw new Error(reason);
};

/** A whole number in the given range, written in plain decimal. */
export const parseInteger =
  (min: number, max: number) =>
  (raw: string): number =>
    /^\d+$/.test(raw) && +raw >= min && +raw <= max ? +raw : refuse(`must be an integer from ${min} to ${max}`);

/** Milliseconds of latency: one number (`300`) or a range to draw from (`200-800`), at most 10,000. */
export function parseLatency(raw: string): LatencyRange {
  const match = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(raw);
  const min = Number(match?.[1]);
  const max = match?.[2] === undefined ? min : Number(match[2]);
  return match && min <= max && max <= 10_000 ? { min, max } : refuse('must be milliseconds (300) or a range (200-800), at most 10000');
}
