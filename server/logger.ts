import { destination as fileDestination, pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import type { LogLevel } from './config.js';

/** Log output waiting for a slow reader beyond this is dropped rather than held. */
const LOG_BACKLOG_BYTES = 16 * 1024 * 1024;

/** The service's structured logger. */
export type Logger = PinoLogger;

/**
 * Standard output, written asynchronously: a line written while an earlier write is in flight joins the
 * next one, so a request never waits for the log reader, and a reader that stalls (a full pipe) costs log
 * lines past 16 MiB of backlog, never requests or unbounded memory. What is buffered is written out when the
 * process exits. sonic-boom gets bytes, not strings: given strings, it measures its whole pending chunk
 * again on every write, a cost every request would pay under load.
 */
function asyncStdout(): DestinationStream {
  const stdout = fileDestination({ dest: 1, sync: false, maxLength: LOG_BACKLOG_BYTES, contentMode: 'buffer' });
  // sonic-boom's types know only strings; its buffer mode takes bytes (https://github.com/pinojs/sonic-boom#api).
  const writeBytes = stdout.write.bind(stdout) as unknown as (bytes: Buffer) => boolean;
  return { write: (line: string) => void writeBytes(Buffer.from(line)) };
}

/**
 * A JSON logger, on stdout unless given another destination. Nothing the service logs carries a request's
 * headers; the redaction is a second line of defence for credentials that might be added by mistake.
 */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'user-records', pid: process.pid },
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization', '*.password', 'password'], censor: '[redacted]' },
  };
  return pino(options, destination ?? asyncStdout());
}
