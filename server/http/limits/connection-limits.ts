import type { Server } from 'node:http';
import { readFileSync } from 'node:fs';
import type { Logger } from '../../logger.js';
import type { Metrics } from '../observability/metrics.js';
import { capConnections } from './connection-cap.js';
import type { Places } from './connection-places.js';
import type { LimitReport } from './limit-report.js';
import { enforceSendTimeout } from './send-timeout.js';

/** File descriptors the process needs besides its connections: the store, logs, Node's own. */
const OTHER_DESCRIPTORS = 64;

/** The soft limit on open files (`ulimit -n`), where Linux tells it; undefined elsewhere. */
function openFilesLimit(): number | undefined {
  try {
    const line = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return line ? Number(line[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Applies the connection limits: MAX_CONNECTIONS and SEND_TIMEOUT_MS per process, MAX_CONNECTIONS_PER_CLIENT for the process group. Warns at start-up when
 * the cap cannot be reached because the process runs out of file descriptors first: past that, accept()
 * fails for every client instead of the cap answering a clean 503.
 */
export function limitConnections(
  http: Server,
  limits: { readonly maxConnections: number; readonly maxConnectionsPerClient: number; readonly sendTimeoutMs: number; readonly places: Places },
  deps: { readonly report: LimitReport; readonly metrics: Metrics; readonly logger: Logger },
): { stop(): void } {
  const files = openFilesLimit();
  if (files !== undefined && limits.maxConnections + OTHER_DESCRIPTORS > files) {
    deps.logger.warn(
      { maxConnections: limits.maxConnections, openFilesLimit: files },
      'MAX_CONNECTIONS is above what the open-file limit (ulimit -n) leaves for connections: raise the limit or lower MAX_CONNECTIONS',
    );
  }
  const caps = { max: limits.maxConnections, perClient: limits.maxConnectionsPerClient, places: limits.places };
  const open = capConnections(http, caps, deps.report, deps.metrics.openConnections);
  return enforceSendTimeout(open, limits.sendTimeoutMs, deps.report);
}
