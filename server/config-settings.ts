import { makeValidator } from 'envalid';
import { parseInteger, parseLatency, refuse, type LatencyRange } from './config-defaults.js';
import { parsePasswordHash, type PasswordHash } from './password-hash.js';
import { parseHostNames } from './host-names.js';

// The kinds of value a setting takes, as envalid validators (https://github.com/af/envalid): each parses a
// variable's text or throws an error whose message is the reason, which config.ts shows after the variable's
// name.

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

/** Log levels accepted by `LOG_LEVEL` (pino's names). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** How the connections reach PostgreSQL: sessions of their own, or through a pooler in transaction mode. */
export const POOL_MODES = ['session', 'transaction'] as const;
export type PoolMode = (typeof POOL_MODES)[number];

/** Longest BASE_PATH: the contract bounds the paths and links that start with it. */
export const MAX_BASE_PATH = 200;
/** Longest Basic user name: the contract bounds the protected resource's greeting, which names it. */
export const MAX_USERNAME = 256;

/** One of the given words. */
const oneOf = <T extends string>(words: readonly T[]) =>
  makeValidator<T>((raw) => (words.includes(raw as T) ? (raw as T) : refuse(`must be one of ${words.join(', ')}`)));

export const integer = (min: number, max: number) => makeValidator<number>(parseInteger(min, max));

/** `sqlite:<path>`, `sqlite::memory:` or `postgres://…`; the pool's size and mode are filled in by config.ts. */
export const databaseUrl = makeValidator<DatabaseConfig>((raw) => {
  if (raw.startsWith('sqlite:')) {
    const filename = raw.slice('sqlite:'.length);
    return filename === '' ? refuse('must name a file after "sqlite:"') : { kind: 'sqlite', filename };
  }
  if (/^postgres(ql)?:\/\//.test(raw)) {
    return URL.canParse(raw) ? { kind: 'postgres', url: raw, poolSize: 0, poolMode: 'session' } : refuse('is not a valid URL');
  }
  return refuse('must be sqlite:<path>, sqlite::memory: or postgres://user@host:port/database');
});

export const poolMode = oneOf(POOL_MODES);
export const logLevel = oneOf(LOG_LEVELS);

/** `auto` (one per CPU this process may use, given as `cpus`; at most 64) or a number from 1 to 64. */
export const workers = (cpus: number) =>
  makeValidator<number>((raw) => {
    if (raw === 'auto') return Math.min(Math.max(cpus, 1), 64);
    return /^\d+$/.test(raw) && +raw >= 1 && +raw <= 64 ? +raw : refuse('must be auto or an integer from 1 to 64');
  });

/** `true` or `false`, spelled so. */
export const boolean = makeValidator<boolean>((raw) => (raw === 'true' ? true : raw === 'false' ? false : refuse('must be true or false')));

/** A number of trusted proxy hops; `true` and `false` are kept as 1 and 0 for existing deployments. */
export const hops = makeValidator<number>((raw) =>
  raw === 'true'
    ? 1
    : raw === 'false'
      ? 0
      : /^\d{1,2}$/.test(raw) && +raw <= 10
        ? +raw
        : refuse('must be a number of proxy hops from 0 to 10 (true = 1, false = 0)'),
);

/** A path prefix such as `/v1`, or nothing. */
export const basePath = makeValidator<string>((raw) =>
  raw.length > MAX_BASE_PATH
    ? refuse(`must be at most ${MAX_BASE_PATH} characters`)
    : raw === '' || /^(\/[A-Za-z0-9._~-]+)+$/.test(raw)
      ? raw
      : refuse('must be empty or a path such as /v1 (no trailing slash)'),
);

/** Any text but the empty string. */
const nonEmptyText = (raw: string): string => (raw === '' ? refuse('must not be empty') : raw);
export const nonEmpty = makeValidator<string>(nonEmptyText);

/** A Basic user name: not empty, and without the `:` that ends it in the header. */
export const username = makeValidator<string>((raw) =>
  raw.includes(':')
    ? refuse('must not contain ":" (RFC 7617)')
    : [...raw].length > MAX_USERNAME
      ? refuse(`must be at most ${MAX_USERNAME} characters`)
      : nonEmptyText(raw),
);

/** An http or https URL, such as a collector's `http://otel-collector:4318`. */
export const httpUrl = makeValidator<string>((raw) =>
  URL.canParse(raw) && ['http:', 'https:'].includes(new URL(raw).protocol) ? raw : refuse('must be an http:// or https:// URL'),
);

/** A comma-separated list of browser origins (scheme, host and port, nothing more). */
export const origins = makeValidator<readonly string[]>((raw) => {
  const given = raw
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');
  const bad = given.find((origin) => !URL.canParse(origin) || new URL(origin).origin !== origin);
  return bad === undefined ? given : refuse(`must be a comma-separated list of origins such as https://app.example.com (not ${JSON.stringify(bad)})`);
});

/** A comma-separated list of host names (`api.example.com`, no scheme or port), lower-cased; `*` alone: any. */
export const hostNames = makeValidator<readonly string[] | '*'>((raw) => {
  try {
    return parseHostNames(raw);
  } catch (error) {
    return refuse((error as Error).message);
  }
});

export const latency = makeValidator<LatencyRange>(parseLatency);

/** An scrypt hash in the form `npm run hash-password` prints. */
export const passwordHash = makeValidator<PasswordHash>((raw) => parsePasswordHash(raw) ?? refuse('must be an scrypt hash made by `npm run hash-password`'));

/** A Redis URL, `redis://[user:password@]host:port[/db]` or `rediss://` for TLS. */
export const redisUrl = makeValidator<string>((raw) =>
  /^rediss?:\/\//.test(raw) && URL.canParse(raw) ? raw : refuse('must be redis://host:port or rediss://host:port'),
);

/** A key prefix of letters, digits, `-`, `_` and `.`, so that it never splits a key at a `:`. */
export const keyPrefix = makeValidator<string>((raw) =>
  /^[A-Za-z0-9._-]{1,64}$/.test(raw) ? raw : refuse('must be 1 to 64 letters, digits, ".", "_" or "-"'),
);
