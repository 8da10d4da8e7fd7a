import { pino, type Logger as PinoLogger } from 'pino';
import type { LogLevel } from './config.js';

/** The service's structured logger. */
export type Logger = PinoLogger;

/** A JSON logger on stdout; credentials are redacted wherever they might appear. */
export function createLogger(level: LogLevel): Logger {
  return pino({
    level,
    base: { service: 'user-records' },
    redact: { paths: ['req.headers.authorization', '*.password', 'password'], censor: '[redacted]' },
  });
}
