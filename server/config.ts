import { availableParallelism } from 'node:os';
import { customCleanEnv, EnvMissingError, type CleanedEnv } from 'envalid';
import { allowedHostsFor, type AllowedHosts } from './host-names.js';
import type { PasswordHash } from './password-hash.js';
import { DEFAULT_BODY_LIMIT_BYTES, SEARCH_BUDGET_MS, SEARCHES_WAITING, type LatencyRange } from './config-defaults.js';
import {
  basePath,
  boolean,
  databaseUrl,
  hops,
  hostNames,
  httpUrl,
  integer,
  keyPrefix,
  latency,
  logLevel,
  nonEmpty,
  origins,
  passwordHash,
  poolMode,
  redisUrl,
  username,
  workers,
  type DatabaseConfig,
  type LogLevel,
} from './config-settings.js';

export type { DatabaseConfig } from './config-settings.js';
export type { LatencyRange } from './config-defaults.js';

/** Bounds on waiting for the store, so that a dead or blackholed database becomes 503 answers, not hangs. */
export interface StoreTimeouts {
  /** One statement: PostgreSQL's statement_timeout (the client gives up a second later); SQLite's busy_timeout. */
  readonly statementMs: number;
  /** Opening a PostgreSQL connection, or waiting for a free one in the pool. */
  readonly connectMs: number;
  /** An idle pooled PostgreSQL connection is closed after this long. */
  readonly idleMs: number;
  /** Idle delay before TCP keepalive probes on PostgreSQL connections; 0 turns keepalive off. */
  readonly keepAliveMs: number;
}

/** Where traces go (OTLP over HTTP), when tracing is on. */
export interface TracingConfig {
  /** The collector's base URL; spans are posted to `<endpoint>/v1/traces`. */
  readonly endpoint: string;
  readonly serviceName: string;
  /** How long finished spans wait to be exported together. */
  readonly exportDelayMs: number;
  /** How long one export may take, retries included, before its spans are dropped. */
  readonly exportTimeoutMs: number;
}

/** How the Basic password is known: as plain text, or only as an scrypt hash. */
export type BasicSecret = { readonly kind: 'password'; readonly password: string } | { readonly kind: 'hash'; readonly hash: PasswordHash };

export { LOG_LEVELS, type LogLevel } from './config-settings.js';

/** The service's whole configuration: read once from the environment, validated, frozen. */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly database: DatabaseConfig;
  readonly storeTimeouts: StoreTimeouts;
  /** How long start-up keeps trying to reach a store that does not answer yet, before it gives up. */
  readonly databaseStartTimeoutMs: number;
  /**
   * Whether a start brings the store's schema up to date (true), or only checks that it is (false: the
   * operator runs `npm run migrate` before rolling out instances, and an instance refuses to start on a
   * schema that lacks a migration it needs).
   */
  readonly migrateAtStart: boolean;
  readonly basicAuth: { readonly username: string; readonly secret: BasicSecret };
  /** Failed Basic attempts allowed per address (and per user name from one address) within the window. */
  readonly authThrottle: { readonly maxFailures: number; readonly windowMs: number };
  /** Password-hash checks running at once, and waiting for a turn, before further ones are refused (503). */
  readonly hashChecks: { readonly concurrency: number; readonly queue: number };
  /** Searches (`q`) that may wait for their turn to run a statement; one more is refused (503 searches-busy). */
  readonly searchQueue: number;
  /** Of those, how many one client may have waiting; one more of its own is refused (0: no bound of its own). */
  readonly searchQueuePerClient: number;
  /**
   * Store time a search may spend examining users one by one per page (and half of it per count), before it
   * answers with what it found (see user-lists.ts).
   */
  readonly searchBudgetMs: number;
  /** Creates, replaces and deletes allowed per client per minute; 0 disables the limit. */
  readonly writesPerMinute: number;
  /** Where the per-client counts are shared by every worker and instance (see http/limits/limiter-store.ts). */
  readonly sharedLimits: {
    /** Redis holds the counts when set; otherwise the store (PostgreSQL), or the cluster primary. */
    readonly redisUrl: string | undefined;
    /** Starts every key (Redis) and row (store): one per service sharing a Redis or a database. */
    readonly keyPrefix: string;
    /** One call to the shared counts, waiting for a connection included; past it, what the call was for is refused (503). */
    readonly timeoutMs: number;
  };
  /** Browser origins allowed to call the API (CORS); empty allows none. */
  readonly corsOrigins: readonly string[];
  /** The Host names the server answers; a request naming another is refused (421). */
  readonly allowedHosts: AllowedHosts;
  /** Proxies in front of the server whose X-Forwarded-For entries are trusted; 0 uses the socket's address. */
  readonly trustProxy: number;
  readonly timeouts: {
    /** Whole request, headers and body, from the first byte. */
    readonly requestMs: number;
    /** Request headers, from the first byte: the slowloris guard. */
    readonly headersMs: number;
    /** An idle keep-alive connection. */
    readonly keepAliveMs: number;
    /** How long SIGTERM waits for requests in flight before cutting them. */
    readonly shutdownMs: number;
    /** A response whose client reads none of it for this long has its connection closed (send timeout). */
    readonly sendMs: number;
  };
  /** Requests one keep-alive connection may carry before the server closes it. */
  readonly maxRequestsPerSocket: number;
  /** Connections held at once; past it a new one is answered 503 and closed. Keep below `ulimit -n`. */
  readonly maxConnections: number;
  /** Connections one client (by address, IPv6 per /64) may hold; 0 for none. Not applied behind TRUST_PROXY. */
  readonly maxConnectionsPerClient: number;
  /** Pipelined requests that may wait on one connection behind the one in progress; past it, it is closed. */
  readonly maxPipelinedRequests: number;
  readonly basePath: string;
  readonly seedDemoData: boolean;
  /** A JSON file of the users a new store starts with instead of the demo users (and a sandbox reset restores). */
  readonly usersFile: string | undefined;
  readonly logLevel: LogLevel;
  readonly bodyLimitBytes: number;
  /** Server processes on this machine (node:cluster; `auto` is resolved to the CPU count here); 1 runs the server in the main process. */
  readonly workers: number;
  /** How long a create may hold its Idempotency-Key before a retry may take the key over. */
  readonly idempotencyLockMs: number;
  /** Idempotency-Keys one client keeps; its oldest beyond that are forgotten. */
  readonly idempotencyKeysPerClient: number;
  /** OpenTelemetry tracing; undefined (off) unless OTEL_EXPORTER_OTLP_ENDPOINT is set. */
  readonly tracing: TracingConfig | undefined;
  /**
   * Sandbox mode (`make sandbox`): the test controls of a frontend (reset, `delay`, `Prefer: code=`) and CORS
   * for local development origins; undefined in a normal start, which has none of them.
   */
  readonly sandbox: SandboxConfig | undefined;
}

export interface SandboxConfig {
  /** How long every answer is held back, unless a request names its own `delay`. */
  readonly latencyMs: LatencyRange;
}

/** Thrown when the environment does not describe a valid configuration; lists every problem found. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

const SECRETS = ['BASIC_AUTH_PASSWORD', 'BASIC_AUTH_PASSWORD_HASH', 'DATABASE_URL', 'REDIS_URL'];
/** Settings that, set to the empty string, are not set. */
const EMPTY_IS_UNSET = ['REDIS_URL', 'USERS_FILE'];

/** What reaching and preparing the store takes: the server's, and `npm run migrate`'s whole configuration. */
export type StoreConfig = Pick<Config, 'database' | 'storeTimeouts' | 'databaseStartTimeoutMs' | 'migrateAtStart' | 'logLevel'>;

/** The settings of the store: each one's kind of value, its bounds and its default. */
const STORE_SETTINGS = {
  DATABASE_URL: databaseUrl({ default: { kind: 'sqlite', filename: './data/users.sqlite' } }),
  DATABASE_POOL_SIZE: integer(1, 1000)({ default: 10 }),
  DATABASE_POOL_MODE: poolMode({ default: 'session' }),
  DATABASE_STATEMENT_TIMEOUT_MS: integer(100, 600_000)({ default: 5000 }),
  DATABASE_CONNECT_TIMEOUT_MS: integer(100, 600_000)({ default: 5000 }),
  DATABASE_IDLE_TIMEOUT_MS: integer(1000, 3_600_000)({ default: 30_000 }),
  DATABASE_KEEPALIVE_MS: integer(0, 3_600_000)({ default: 10_000 }),
  DATABASE_START_TIMEOUT_MS: integer(0, 3_600_000)({ default: 60_000 }),
  MIGRATE_AT_START: boolean({ default: true }),
  LOG_LEVEL: logLevel({ default: 'info' }),
};

/**
 * Every setting of the service, in the order a start reports their problems: each one's kind of value, its
 * bounds and its default. A few depend on others: the sandbox's (no write limit by default, a latency), the
 * password or its hash (whichever is set), tracing's (only with a collector).
 */
function serviceSettings(env: Env) {
  const sandbox = env.SANDBOX === 'true';
  return {
    PORT: integer(0, 65535)({ default: 3000 }),
    HOST: nonEmpty({ default: '127.0.0.1' }),
    ...STORE_SETTINGS,
    BASIC_AUTH_USERNAME: username(),
    // Whichever of the two is set; both, or neither, is a problem of its own (loadConfig).
    ...(env.BASIC_AUTH_PASSWORD_HASH !== undefined && env.BASIC_AUTH_PASSWORD === undefined ? { BASIC_AUTH_PASSWORD_HASH: passwordHash() } : {}),
    ...(env.BASIC_AUTH_PASSWORD !== undefined && env.BASIC_AUTH_PASSWORD_HASH === undefined ? { BASIC_AUTH_PASSWORD: nonEmpty() } : {}),
    AUTH_MAX_FAILURES: integer(1, 1_000_000)({ default: 10 }),
    AUTH_FAILURE_WINDOW_SECONDS: integer(1, 86_400)({ default: 900 }),
    AUTH_HASH_CONCURRENCY: integer(1, 64)({ default: 2 }),
    AUTH_HASH_QUEUE: integer(0, 10_000)({ default: 32 }),
    SEARCH_QUEUE: integer(1, 100_000)({ default: SEARCHES_WAITING }),
    SEARCH_QUEUE_PER_CLIENT: integer(0, 100_000)({ default: 16 }),
    SEARCH_BUDGET_MS: integer(0, 10_000)({ default: SEARCH_BUDGET_MS }),
    // A sandbox takes a test suite's writes, thousands a minute from one address: no limit unless asked for.
    RATE_LIMIT_WRITES_PER_MINUTE: integer(0, 100_000_000)({ default: sandbox ? 0 : 600 }),
    REDIS_URL: redisUrl({ default: undefined }),
    RATE_LIMIT_KEY_PREFIX: keyPrefix({ default: 'user-records' }),
    RATE_LIMIT_STORE_TIMEOUT_MS: integer(10, 60_000)({ default: 500 }),
    CORS_ORIGINS: origins({ default: [] }),
    ALLOWED_HOSTS: hostNames({ default: undefined }),
    TRUST_PROXY: hops({ default: 0 }),
    REQUEST_TIMEOUT_MS: integer(1000, 3_600_000)({ default: 30_000 }),
    HEADERS_TIMEOUT_MS: integer(500, 600_000)({ default: 10_000 }),
    KEEP_ALIVE_TIMEOUT_MS: integer(100, 600_000)({ default: 5000 }),
    SHUTDOWN_TIMEOUT_MS: integer(0, 600_000)({ default: 10_000 }),
    SEND_TIMEOUT_MS: integer(1000, 3_600_000)({ default: 30_000 }),
    MAX_REQUESTS_PER_SOCKET: integer(1, 1_000_000)({ default: 1000 }),
    MAX_CONNECTIONS: integer(1, 1_000_000)({ default: 1000 }),
    MAX_CONNECTIONS_PER_CLIENT: integer(0, 1_000_000)({ default: 100 }),
    MAX_PIPELINED_REQUESTS: integer(0, 10_000)({ default: 16 }),
    BASE_PATH: basePath({ default: '' }),
    SEED_DEMO_DATA: boolean({ default: true }),
    USERS_FILE: nonEmpty({ default: undefined }),
    BODY_LIMIT_BYTES: integer(1, 10 * 1024 * 1024)({ default: DEFAULT_BODY_LIMIT_BYTES }),
    WORKERS: workers(availableParallelism())({ default: 1 }),
    IDEMPOTENCY_LOCK_SECONDS: integer(1, 3600)({ default: 30 }),
    IDEMPOTENCY_KEYS_PER_CLIENT: integer(1, 1_000_000)({ default: 1000 }),
    // The variable names are OpenTelemetry's own, so that collectors' documentation applies as written.
    ...(env.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined
      ? {
          OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl(),
          OTEL_SERVICE_NAME: nonEmpty({ default: 'user-records' }),
          OTEL_BSP_SCHEDULE_DELAY: integer(10, 60_000)({ default: 5000 }),
          OTEL_EXPORTER_OTLP_TIMEOUT: integer(100, 60_000)({ default: 10_000 }),
        }
      : {}),
    SANDBOX: boolean({ default: false }),
    ...(sandbox ? { SANDBOX_LATENCY_MS: latency({ default: { min: 0, max: 0 } }) } : {}),
  };
}

/**
 * The settings' values read from `env` by envalid, and a line for each variable that is missing or bad (in
 * the settings' order). Secrets are never echoed back, not even in a start-up error (a database URL may carry
 * a password).
 */
function readSettings<S>(env: Env, settings: S): { values: Readonly<CleanedEnv<S>>; problems: string[] } {
  const given = Object.fromEntries(Object.entries(env).filter(([name, value]) => !(EMPTY_IS_UNSET.includes(name) && value === '')));
  const problems: string[] = [];
  // Without envalid's strict proxy, which throws on reading a setting that failed: its problem is reported.
  const values = customCleanEnv(given, settings, (cleaned) => cleaned, {
    reporter: ({ errors }) => {
      for (const [name, error] of Object.entries(errors) as [string, Error][]) {
        if (error instanceof EnvMissingError) problems.push(`${name} is required but not set`);
        else problems.push(`${name} ${error.message}${SECRETS.includes(name) ? '' : ` (got ${JSON.stringify(env[name])})`}`);
      }
    },
  });
  return { values, problems };
}

/** The store's configuration from the store's settings, and the problems of settings that do not fit together. */
function storeConfig(env: Env, v: CleanedEnv<typeof STORE_SETTINGS>, problems: string[]): StoreConfig {
  const database = v.DATABASE_URL as DatabaseConfig | undefined;
  if (env.DATABASE_POOL_MODE !== undefined && database?.kind === 'sqlite')
    problems.push('DATABASE_POOL_MODE applies to PostgreSQL only (DATABASE_URL names SQLite)');
  return {
    database: (database?.kind === 'postgres' ? { ...database, poolSize: v.DATABASE_POOL_SIZE, poolMode: v.DATABASE_POOL_MODE } : database) as DatabaseConfig,
    storeTimeouts: {
      statementMs: v.DATABASE_STATEMENT_TIMEOUT_MS,
      connectMs: v.DATABASE_CONNECT_TIMEOUT_MS,
      idleMs: v.DATABASE_IDLE_TIMEOUT_MS,
      keepAliveMs: v.DATABASE_KEEPALIVE_MS,
    },
    databaseStartTimeoutMs: v.DATABASE_START_TIMEOUT_MS,
    migrateAtStart: v.MIGRATE_AT_START,
    logLevel: v.LOG_LEVEL,
  };
}

/** Reads and validates what `npm run migrate` needs (no credentials); throws a ConfigError as loadConfig does. */
export function loadStoreConfig(env: Env): StoreConfig {
  const { values, problems } = readSettings(env, STORE_SETTINGS);
  const config = storeConfig(env, values, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

/** Reads and validates the configuration; throws a ConfigError naming each bad or missing variable. */
export function loadConfig(env: Env): Config {
  const { values: v, problems } = readSettings(env, serviceSettings(env));
  const store = storeConfig(env, v, problems);
  const secrets = ['BASIC_AUTH_PASSWORD', 'BASIC_AUTH_PASSWORD_HASH'].filter((name) => env[name] !== undefined);
  if (secrets.length !== 1) {
    problems.push(`set exactly one of BASIC_AUTH_PASSWORD and BASIC_AUTH_PASSWORD_HASH (${secrets.length === 0 ? 'neither is set' : 'both are set'})`);
  }
  const secret: BasicSecret =
    env.BASIC_AUTH_PASSWORD_HASH !== undefined ? { kind: 'hash', hash: v.BASIC_AUTH_PASSWORD_HASH! } : { kind: 'password', password: v.BASIC_AUTH_PASSWORD! };
  const config: Config = {
    port: v.PORT,
    host: v.HOST,
    ...store,
    basicAuth: { username: v.BASIC_AUTH_USERNAME, secret },
    authThrottle: { maxFailures: v.AUTH_MAX_FAILURES, windowMs: v.AUTH_FAILURE_WINDOW_SECONDS * 1000 },
    hashChecks: { concurrency: v.AUTH_HASH_CONCURRENCY, queue: v.AUTH_HASH_QUEUE },
    searchQueue: v.SEARCH_QUEUE,
    searchQueuePerClient: v.SEARCH_QUEUE_PER_CLIENT,
    searchBudgetMs: v.SEARCH_BUDGET_MS,
    writesPerMinute: v.RATE_LIMIT_WRITES_PER_MINUTE,
    sharedLimits: { redisUrl: v.REDIS_URL, keyPrefix: v.RATE_LIMIT_KEY_PREFIX, timeoutMs: v.RATE_LIMIT_STORE_TIMEOUT_MS },
    corsOrigins: v.CORS_ORIGINS,
    allowedHosts: allowedHostsFor(v.ALLOWED_HOSTS, v.HOST),
    trustProxy: v.TRUST_PROXY,
    timeouts: {
      requestMs: v.REQUEST_TIMEOUT_MS,
      headersMs: v.HEADERS_TIMEOUT_MS,
      keepAliveMs: v.KEEP_ALIVE_TIMEOUT_MS,
      shutdownMs: v.SHUTDOWN_TIMEOUT_MS,
      sendMs: v.SEND_TIMEOUT_MS,
    },
    maxRequestsPerSocket: v.MAX_REQUESTS_PER_SOCKET,
    maxConnections: v.MAX_CONNECTIONS,
    maxConnectionsPerClient: v.MAX_CONNECTIONS_PER_CLIENT,
    maxPipelinedRequests: v.MAX_PIPELINED_REQUESTS,
    basePath: v.BASE_PATH,
    seedDemoData: v.SEED_DEMO_DATA,
    usersFile: v.USERS_FILE,
    bodyLimitBytes: v.BODY_LIMIT_BYTES,
    workers: v.WORKERS,
    idempotencyLockMs: v.IDEMPOTENCY_LOCK_SECONDS * 1000,
    idempotencyKeysPerClient: v.IDEMPOTENCY_KEYS_PER_CLIENT,
    tracing:
      env.OTEL_EXPORTER_OTLP_ENDPOINT === undefined
        ? undefined
        : {
            endpoint: v.OTEL_EXPORTER_OTLP_ENDPOINT!,
            serviceName: v.OTEL_SERVICE_NAME!,
            exportDelayMs: v.OTEL_BSP_SCHEDULE_DELAY!,
            exportTimeoutMs: v.OTEL_EXPORTER_OTLP_TIMEOUT!,
          },
    sandbox: v.SANDBOX ? { latencyMs: v.SANDBOX_LATENCY_MS! } : undefined,
  };
  if (config.sandbox && config.database?.kind !== 'sqlite') problems.push('SANDBOX runs on SQLite (sqlite::memory: or a file), not PostgreSQL');
  if (config.sandbox && config.workers > 1) problems.push('SANDBOX runs in one process: its store is in memory (WORKERS must be 1)');
  if (config.timeouts.headersMs > config.timeouts.requestMs) {
    problems.push('HEADERS_TIMEOUT_MS must not be larger than REQUEST_TIMEOUT_MS');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}
