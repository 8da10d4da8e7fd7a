import { parsePasswordHash, type PasswordHash } from './auth/password-hash.js';

/** Where the store lives, parsed from `DATABASE_URL` (and `DATABASE_POOL_SIZE` for PostgreSQL). */
export type DatabaseConfig =
  | { readonly kind: 'sqlite'; readonly filename: string }
  | { readonly kind: 'postgres'; readonly url: string; readonly poolSize: number };

/** How the Basic password is known: as plain text, or only as an scrypt hash. */
export type BasicSecret = { readonly kind: 'password'; readonly password: string } | { readonly kind: 'hash'; readonly hash: PasswordHash };

/** Log levels accepted by `LOG_LEVEL` (pino's names). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The service's whole configuration: read once from the environment, validated, frozen. */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly database: DatabaseConfig;
  readonly basicAuth: { readonly username: string; readonly secret: BasicSecret };
  /** Failed Basic attempts allowed per address (and per user name from one address) within the window. */
  readonly authThrottle: { readonly maxFailures: number; readonly windowMs: number };
  /** Browser origins allowed to call the API (CORS); empty allows none. */
  readonly corsOrigins: readonly string[];
  /** Take the client address from X-Forwarded-For (behind a trusted proxy or load balancer). */
  readonly trustProxy: boolean;
  readonly timeouts: {
    /** Whole request, headers and body, from the first byte. */
    readonly requestMs: number;
    /** Request headers, from the first byte: the slowloris guard. */
    readonly headersMs: number;
    /** An idle keep-alive connection. */
    readonly keepAliveMs: number;
    /** How long SIGTERM waits for requests in flight before cutting them. */
    readonly shutdownMs: number;
  };
  /** Requests one keep-alive connection may carry before the server closes it. */
  readonly maxRequestsPerSocket: number;
  readonly basePath: string;
  readonly seedDemoData: boolean;
  readonly logLevel: LogLevel;
  readonly bodyLimitBytes: number;
  /** Server processes on this machine (node:cluster); 1 runs the server in the main process. */
  readonly workers: number;
}

/** Thrown when the environment does not describe a valid configuration; lists every problem found. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

const SECRETS = ['BASIC_AUTH_PASSWORD', 'BASIC_AUTH_PASSWORD_HASH', 'DATABASE_URL'];

/** A reader's verdict on a value it cannot accept. */
class Invalid {
  constructor(readonly reason: string) {}
}
const invalid = (reason: string) => new Invalid(reason);
type Reader<T> = (raw: string) => T | Invalid;

/** `sqlite:<path>`, `sqlite::memory:` or `postgres://…`; the pool size is filled in by loadConfig. */
const readDatabaseUrl: Reader<DatabaseConfig> = (raw) => {
  if (raw.startsWith('sqlite:')) {
    const filename = raw.slice('sqlite:'.length);
    return filename === '' ? invalid('must name a file after "sqlite:"') : { kind: 'sqlite', filename };
  }
  if (/^postgres(ql)?:\/\//.test(raw)) {
    return URL.canParse(raw) ? { kind: 'postgres', url: raw, poolSize: 0 } : invalid('is not a valid URL');
  }
  return invalid('must be sqlite:<path>, sqlite::memory: or postgres://user@host:port/database');
};

function integerIn(min: number, max: number): Reader<number> {
  return (raw) =>
    /^\d+$/.test(raw) && +raw >= min && +raw <= max ? +raw : invalid(`must be an integer from ${min} to ${max}`);
}

const readBoolean: Reader<boolean> = (raw) =>
  raw === 'true' ? true : raw === 'false' ? false : invalid('must be true or false');

const readBasePath: Reader<string> = (raw) =>
  raw === '' || /^(\/[A-Za-z0-9._~-]+)+$/.test(raw)
    ? raw
    : invalid('must be empty or a path such as /v1 (no trailing slash)');

const readNonEmpty: Reader<string> = (raw) => (raw === '' ? invalid('must not be empty') : raw);

const readUsername: Reader<string> = (raw) =>
  raw.includes(':') ? invalid('must not contain ":" (RFC 7617)') : readNonEmpty(raw);

const readOrigins: Reader<readonly string[]> = (raw) => {
  const origins = raw.split(',').map((origin) => origin.trim()).filter((origin) => origin !== '');
  const bad = origins.find((origin) => !URL.canParse(origin) || new URL(origin).origin !== origin);
  return bad === undefined ? origins : invalid(`must be a comma-separated list of origins such as https://app.example.com (not ${JSON.stringify(bad)})`);
};

const readPasswordHash: Reader<PasswordHash> = (raw) =>
  parsePasswordHash(raw) ?? invalid('must be an scrypt hash made by `npm run hash-password`');

const readLogLevel: Reader<LogLevel> = (raw) =>
  (LOG_LEVELS as readonly string[]).includes(raw)
    ? (raw as LogLevel)
    : invalid(`must be one of ${LOG_LEVELS.join(', ')}`);

/** Reads and validates the configuration; throws a ConfigError naming each bad or missing variable. */
export function loadConfig(env: Env): Config {
  const problems: string[] = [];
  function read<T>(name: string, reader: Reader<T>, fallback?: string): T {
    const raw = env[name] ?? fallback;
    if (raw === undefined) {
      problems.push(`${name} is required but not set`);
      return undefined as T;
    }
    const value = reader(raw);
    if (!(value instanceof Invalid)) return value;
    // Secrets are never echoed back, not even in a start-up error (a database URL may carry a password).
    const shown = SECRETS.includes(name) ? '' : ` (got ${JSON.stringify(raw)})`;
    problems.push(`${name} ${value.reason}${shown}`);
    return undefined as T;
  }
  /** Exactly one of BASIC_AUTH_PASSWORD and BASIC_AUTH_PASSWORD_HASH. */
  function readSecret(): BasicSecret {
    const given = ['BASIC_AUTH_PASSWORD', 'BASIC_AUTH_PASSWORD_HASH'].filter((name) => env[name] !== undefined);
    if (given.length !== 1) {
      problems.push(`set exactly one of BASIC_AUTH_PASSWORD and BASIC_AUTH_PASSWORD_HASH (${given.length === 0 ? 'neither is set' : 'both are set'})`);
      return undefined as unknown as BasicSecret;
    }
    return env.BASIC_AUTH_PASSWORD_HASH !== undefined
      ? { kind: 'hash', hash: read('BASIC_AUTH_PASSWORD_HASH', readPasswordHash) }
      : { kind: 'password', password: read('BASIC_AUTH_PASSWORD', readNonEmpty) };
  }
  const database = read('DATABASE_URL', readDatabaseUrl, 'sqlite:./data/users.sqlite');
  const poolSize = read('DATABASE_POOL_SIZE', integerIn(1, 1000), '10');
  const config: Config = {
    port: read('PORT', integerIn(0, 65535), '3000'),
    host: read('HOST', readNonEmpty, '127.0.0.1'),
    database: database?.kind === 'postgres' ? { ...database, poolSize } : database,
    basicAuth: { username: read('BASIC_AUTH_USERNAME', readUsername), secret: readSecret() },
    authThrottle: {
      maxFailures: read('AUTH_MAX_FAILURES', integerIn(1, 1_000_000), '10'),
      windowMs: read('AUTH_FAILURE_WINDOW_SECONDS', integerIn(1, 86_400), '900') * 1000,
    },
    corsOrigins: read('CORS_ORIGINS', readOrigins, ''),
    trustProxy: read('TRUST_PROXY', readBoolean, 'false'),
    timeouts: {
      requestMs: read('REQUEST_TIMEOUT_MS', integerIn(1000, 3_600_000), '30000'),
      headersMs: read('HEADERS_TIMEOUT_MS', integerIn(500, 600_000), '10000'),
      keepAliveMs: read('KEEP_ALIVE_TIMEOUT_MS', integerIn(100, 600_000), '5000'),
      shutdownMs: read('SHUTDOWN_TIMEOUT_MS', integerIn(0, 600_000), '10000'),
    },
    maxRequestsPerSocket: read('MAX_REQUESTS_PER_SOCKET', integerIn(1, 1_000_000), '1000'),
    basePath: read('BASE_PATH', readBasePath, ''),
    seedDemoData: read('SEED_DEMO_DATA', readBoolean, 'true'),
    logLevel: read('LOG_LEVEL', readLogLevel, 'info'),
    bodyLimitBytes: read('BODY_LIMIT_BYTES', integerIn(1, 10 * 1024 * 1024), '65536'),
    workers: read('WORKERS', integerIn(1, 64), '1'),
  };
  if (config.timeouts.headersMs > config.timeouts.requestMs) {
    problems.push('HEADERS_TIMEOUT_MS must not be larger than REQUEST_TIMEOUT_MS');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}
