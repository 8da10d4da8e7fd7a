import type { LatencyRange } from './config-defaults.js';
import { parsePasswordHash, type PasswordHash } from './password-hash.js';

// How each environment variable's text becomes a value, or the reason it cannot; config.ts reads them.

/** Log levels accepted by `LOG_LEVEL` (pino's names). */
/** Where the store lives, parsed from `DATABASE_URL` (and `DATABASE_POOL_SIZE` for PostgreSQL). */
export type DatabaseConfig =
  | { readonly kind: 'sqlite'; readonly filename: string }
  | {
      readonly kind: 'postgres';
      readonly url: string;
      readonly poolSize: number;
      /**
       * `session`: each connection is a session of the service's own (directly, or a pooler in session mode).
       * `transaction`: a pooler in transaction mode (PgBouncer) stands between: timeouts are set in each
       * transaction, never at connect or for a session, and no statement is prepared by name.
       */
      readonly poolMode: PoolMode;
    };

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A reader's verdict on a value it cannot accept. */
export class Invalid {
  constructor(readonly reason: string) {}
}
const invalid = (reason: string) => new Invalid(reason);
/** Turns a variable's text into its value, or says why it cannot. */
export type Reader<T> = (raw: string) => T | Invalid;

/** `sqlite:<path>`, `sqlite::memory:` or `postgres://…`; the pool size is filled in by loadConfig. */
export const readDatabaseUrl: Reader<DatabaseConfig> = (raw) => {
  if (raw.startsWith('sqlite:')) {
    const filename = raw.slice('sqlite:'.length);
    return filename === '' ? invalid('must name a file after "sqlite:"') : { kind: 'sqlite', filename };
  }
  if (/^postgres(ql)?:\/\//.test(raw)) {
    return URL.canParse(raw) ? { kind: 'postgres', url: raw, poolSize: 0, poolMode: 'session' } : invalid('is not a valid URL');
  }
  return invalid('must be sqlite:<path>, sqlite::memory: or postgres://user@host:port/database');
};

/** How the connections reach PostgreSQL: sessions of their own, or through a pooler in transaction mode. */
export const POOL_MODES = ['session', 'transaction'] as const;
export type PoolMode = (typeof POOL_MODES)[number];
export const readPoolMode: Reader<PoolMode> = (raw) =>
  (POOL_MODES as readonly string[]).includes(raw) ? (raw as PoolMode) : invalid(`must be one of ${POOL_MODES.join(', ')}`);

/** A whole number in the given range, written in plain decimal. */
export function integerIn(min: number, max: number): Reader<number> {
  return (raw) => (/^\d+$/.test(raw) && +raw >= min && +raw <= max ? +raw : invalid(`must be an integer from ${min} to ${max}`));
}

/** `auto` (one per CPU this process may use, given as `cpus`; at most 64) or a number from 1 to 64. */
export function readWorkers(cpus: number): Reader<number> {
  const count = integerIn(1, 64);
  return (raw) => {
    if (raw === 'auto') return Math.min(Math.max(cpus, 1), 64);
    return count(raw) instanceof Invalid ? invalid('must be auto or an integer from 1 to 64') : count(raw);
  };
}

/** `true` or `false`, spelled so. */
export const readBoolean: Reader<boolean> = (raw) => (raw === 'true' ? true : raw === 'false' ? false : invalid('must be true or false'));

/** A number of trusted proxy hops; `true` and `false` are kept as 1 and 0 for existing deployments. */
export const readHops: Reader<number> = (raw) =>
  raw === 'true'
    ? 1
    : raw === 'false'
      ? 0
      : /^\d{1,2}$/.test(raw) && +raw <= 10
        ? +raw
        : invalid('must be a number of proxy hops from 0 to 10 (true = 1, false = 0)');

/** A path prefix such as `/v1`, or nothing. */
export const readBasePath: Reader<string> = (raw) =>
  raw.length > MAX_BASE_PATH
    ? invalid(`must be at most ${MAX_BASE_PATH} characters`)
    : raw === '' || /^(\/[A-Za-z0-9._~-]+)+$/.test(raw)
      ? raw
      : invalid('must be empty or a path such as /v1 (no trailing slash)');

/** Longest BASE_PATH: the contract bounds the paths and links that start with it. */
export const MAX_BASE_PATH = 200;

/** Any text but the empty string. */
export const readNonEmpty: Reader<string> = (raw) => (raw === '' ? invalid('must not be empty') : raw);

/** A Basic user name: not empty, and without the `:` that ends it in the header. */
export const readUsername: Reader<string> = (raw) =>
  raw.includes(':')
    ? invalid('must not contain ":" (RFC 7617)')
    : [...raw].length > MAX_USERNAME
      ? invalid(`must be at most ${MAX_USERNAME} characters`)
      : readNonEmpty(raw);

/** Longest Basic user name: the contract bounds the protected resource's greeting, which names it. */
export const MAX_USERNAME = 256;

/** An http or https URL, such as a collector's `http://otel-collector:4318`. */
export const readHttpUrl: Reader<string> = (raw) =>
  URL.canParse(raw) && ['http:', 'https:'].includes(new URL(raw).protocol) ? raw : invalid('must be an http:// or https:// URL');

/** A comma-separated list of browser origins (scheme, host and port, nothing more). */
export const readOrigins: Reader<readonly string[]> = (raw) => {
  const origins = raw
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');
  const bad = origins.find((origin) => !URL.canParse(origin) || new URL(origin).origin !== origin);
  return bad === undefined ? origins : invalid(`must be a comma-separated list of origins such as https://app.example.com (not ${JSON.stringify(bad)})`);
};

/** Milliseconds of latency: one number (`300`) or a range to draw from (`200-800`), at most 10,000. */
export const readLatency: Reader<LatencyRange> = (raw) => {
  const match = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(raw);
  const min = Number(match?.[1]);
  const max = match?.[2] === undefined ? min : Number(match[2]);
  return match && min <= max && max <= 10_000 ? { min, max } : invalid('must be milliseconds (300) or a range (200-800), at most 10000');
};

/** An scrypt hash in the form `npm run hash-password` prints. */
export const readPasswordHash: Reader<PasswordHash> = (raw) => parsePasswordHash(raw) ?? invalid('must be an scrypt hash made by `npm run hash-password`');

/** One of pino's level names. */
export const readLogLevel: Reader<LogLevel> = (raw) =>
  (LOG_LEVELS as readonly string[]).includes(raw) ? (raw as LogLevel) : invalid(`must be one of ${LOG_LEVELS.join(', ')}`);

/** A Redis URL, `redis://[user:password@]host:port[/db]` or `rediss://` for TLS. */
export const readRedisUrl: Reader<string> = (raw) =>
  /^rediss?:\/\//.test(raw) && URL.canParse(raw) ? raw : invalid('must be redis://host:port or rediss://host:port');

/** A key prefix of letters, digits, `-`, `_` and `.`, so that it never splits a key at a `:`. */
export const readKeyPrefix: Reader<string> = (raw) => (/^[A-Za-z0-9._-]{1,64}$/.test(raw) ? raw : invalid('must be 1 to 64 letters, digits, ".", "_" or "-"'));
