import type { Logger } from '../../logger.js';

/** How often, at most, a summary line of one kind of refusal is logged. */
export const SUMMARY_INTERVAL_MS = 1000;

/**
 * Logs refusals of load as a summary per kind: the first at once, then at most one line per interval, saying
 * how many of that kind were refused since the line before. A flood of refusals (thousands a second, each
 * cheap to answer) then costs the log a line a second, and the operator still reads every one in the counts.
 */
export function refusalSummary(logger: Logger, msg: string, intervalMs = SUMMARY_INTERVAL_MS): (kind: string) => void {
  const kinds = new Map<string, { refused: number; loggedAt: number; timer?: NodeJS.Timeout | undefined }>();
  const flush = (kind: string) => {
    const counted = kinds.get(kind)!;
    counted.timer = undefined;
    if (counted.refused === 0) return;
    logger.warn({ kind, refused: counted.refused }, msg);
    counted.refused = 0;
    counted.loggedAt = performance.now();
  };
  return (kind) => {
    let counted = kinds.get(kind);
    if (!counted) kinds.set(kind, (counted = { refused: 0, loggedAt: -Infinity }));
    counted.refused++;
    const wait = counted.loggedAt + intervalMs - performance.now();
    if (wait <= 0) flush(kind);
    // The refusals of the rest of the interval go into one line at its end.
    else counted.timer ??= setTimeout(() => flush(kind), wait).unref();
  };
}
