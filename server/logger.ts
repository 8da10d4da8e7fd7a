import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
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
  return destination ? pino(options, destination) : pino(options);
}
