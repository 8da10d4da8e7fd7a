import { destination as fileDestination, pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import type { LogLevel } from './config.js';

/** The service's structured logger. */
export type Logger = PinoLogger;

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
  // Asynchronous stdout: a line written while an earlier write is in flight joins the next one, so logging
  // never blocks a request on the log reader and costs one write per batch, not per line. pino writes out
  // what is buffered synchronously when the process exits, fatal exits included.
  return pino(options, destination ?? fileDestination({ dest: 1, sync: false }));
}
