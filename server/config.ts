/** Where the store lives, parsed from `DATABASE_URL` (and `DATABASE_POOL_SIZE` for PostgreSQL). */
export type DatabaseConfig =
  | { readonly kind: 'sqlite'; readonly filename: string }
  | { readonly kind: 'postgres'; readonly url: string; readonly poolSize: number };

/** Log levels accepted by `LOG_LEVEL` (pino's names). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The service's whole configuration: read once from the environment, validated, frozen. */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly database: DatabaseConfig;
  readonly basicAuth: { readonly username: string; readonly password: string };
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
    const shown = name.startsWith('BASIC_AUTH_PASSWORD') || name === 'DATABASE_URL' ? '' : ` (got ${JSON.stringify(raw)})`;
    problems.push(`${name} ${value.reason}${shown}`);
    return undefined as T;
  }
  const database = read('DATABASE_URL', readDatabaseUrl, 'sqlite:./data/users.sqlite');
  const poolSize = read('DATABASE_POOL_SIZE', integerIn(1, 1000), '10');
  const config: Config = {
    port: read('PORT', integerIn(0, 65535), '3000'),
    host: read('HOST', readNonEmpty, '127.0.0.1'),
    database: database?.kind === 'postgres' ? { ...database, poolSize } : database,
    basicAuth: {
      username: read('BASIC_AUTH_USERNAME', readUsername),
      password: read('BASIC_AUTH_PASSWORD', readNonEmpty),
    },
    basePath: read('BASE_PATH', readBasePath, ''),
    seedDemoData: read('SEED_DEMO_DATA', readBoolean, 'true'),
    logLevel: read('LOG_LEVEL', readLogLevel, 'info'),
    bodyLimitBytes: read('BODY_LIMIT_BYTES', integerIn(1, 10 * 1024 * 1024), '65536'),
    workers: read('WORKERS', integerIn(1, 64), '1'),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}
