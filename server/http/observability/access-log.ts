import { symbols, type DestinationStream } from 'pino';
import type { Logger } from '../../logger.js';

/** What the access log says of one answered request. */
export interface AccessEntry {
  /** Either the client's id, checked to be plain (see observability.ts), or a UUID: no character needs escaping. */
  readonly requestId: string;
  /** The request's trace, when tracing is on: 32 hex digits, nothing to escape. */
  readonly traceId?: string;
  /** As Node's parser accepted it: an HTTP token. */
  readonly method: string;
  /** As the client sent it: anything, so it is escaped. */
  readonly path: string;
  /** From the contract's route table, or 'none'. */
  readonly operationId: string;
  readonly status: number;
  readonly durationMs: number;
}

/**
 * Writes the access log: a line per answered request, in the envelope of the logger's own lines
 * (`{"level":30,"time":…,"service":…,"pid":…,…,"msg":"request"}`) and to the same destination, at info, or
 * at debug when `quiet`. The line is put together here rather than by pino: its fields are fixed and typed,
 * and pino's generic path (walking the object, redaction) is a share of every request's cost that a line of
 * fixed fields does not need. Everything else the service logs goes through pino.
 */
export function accessLog(logger: Logger): (entry: AccessEntry, quiet: boolean) => void {
  const internals = logger as unknown as { [symbols.streamSym]: DestinationStream; [symbols.chindingsSym]: string };
  const destination = internals[symbols.streamSym];
  // The logger's bindings (service, pid), serialized by pino as `,"key":value…`.
  const bindings = internals[symbols.chindingsSym];
  const envelope = (level: 'info' | 'debug') => ({ level, head: `{"level":${logger.levels.values[level]},"time":` });
  const info = envelope('info');
  const debug = envelope('debug');
  return (entry, quiet) => {
    const { level, head } = quiet ? debug : info;
    if (!logger.isLevelEnabled(level)) return;
    destination.write(
      `${head}${Date.now()}${bindings},"requestId":"${entry.requestId}",${entry.traceId ? `"traceId":"${entry.traceId}",` : ''}"method":"${entry.method}","path":${JSON.stringify(entry.path)},` +
        `"operationId":"${entry.operationId}","status":${entry.status},"durationMs":${entry.durationMs},"msg":"request"}\n`,
    );
  };
}
