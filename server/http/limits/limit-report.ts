import type { Logger } from '../../logger.js';
import type { ConnectionLimit, Metrics } from '../observability/metrics.js';

/** Lines about one limit are written at most this often; an attack of a thousand sockets is one line. */
const LOG_INTERVAL_MS = 10_000;

/** Counts every connection a limit refused or closed, and logs it (at most once per interval and limit). */
export type LimitReport = (limit: ConnectionLimit, fields: Readonly<Record<string, unknown>>, message: string) => void;

/** Creates the report shared by the connection limits of one server. */
export function createLimitReport(logger: Logger, metrics: Metrics): LimitReport {
  const last = new Map<ConnectionLimit, { at: number; suppressed: number }>();
  return (limit, fields, message) => {
    metrics.connectionLimited(limit);
    const now = Date.now();
    const previous = last.get(limit);
    if (previous && now - previous.at < LOG_INTERVAL_MS) {
      previous.suppressed++;
      return;
    }
    logger.warn({ limit, ...fields, alsoSinceLastLine: previous?.suppressed ?? 0 }, message);
    last.set(limit, { at: now, suppressed: 0 });
  };
}
