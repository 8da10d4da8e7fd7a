import { availableParallelism } from 'node:os';
import type { PasswordHash } from './password-hash.js';
import {
  integerIn,
  Invalid,
  readBasePath,
  readBoolean,
  readDatabaseUrl,
  readHttpUrl,
  readHops,
  readLatency,
  readLogLevel,
  readNonEmpty,
  readOrigins,
  readPasswordHash,
  readPoolMode,
  readKeyPrefix,
  readRedisUrl,
  readUsername,
  readWorkers,
  type LogLevel,
  type Reader,
} from './config-readers.js';
import type { DatabaseConfig } from './config-readers.js';
import type { LatencyRange } from './config-defaults.js';
import { DEFAULT_BODY_LIMIT_BYTES, SEARCH_BUDGET_MS, SEARCHES_WAITING } from './config-defaults.js';

export type { DatabaseConfig } from './config-readers.js';
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

export { LOG_LEVELS, type LogLevel } from './config-readers.js';

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

type Read = <T>(name: string, reader: Reader<T>, fallback?: string) => T;

/** A reader of `env` that records each bad or missing variable in `problems`. */
function readerOf(env: Env, problems: string[]): Read {
  return <T>(name: string, reader: Reader<T>, fallback?: string): T => {
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
  };
}

/** What reaching and preparing the store takes: the server's, and `npm run migrate`'s whole configuration. */
export type StoreConfig = Pick<Config, 'database' | 'storeTimeouts' | 'databaseStartTimeoutMs' | 'migrateAtStart' | 'logLevel'>;

function readStoreConfig(env: Env, read: Read, problems: string[]): StoreConfig {
  const database = read('DATABASE_URL', readDatabaseUrl, 'sqlite:./data/users.sqlite');
  const poolSize = read('DATABASE_POOL_SIZE', integerIn(1, 1000), '10');
  const poolMode = read('DATABASE_POOL_MODE', readPoolMode, 'session');
  if (env.DATABASE_POOL_MODE !== undefined && database?.kind === 'sqlite')
    problems.push('DATABASE_POOL_MODE applies to PostgreSQL only (DATABASE_URL names SQLite)');
  return {
    database: database?.kind === 'postgres' ? { ...database, poolSize, poolMode } : database,
    storeTimeouts: {
      statementMs: read('DATABASE_STATEMENT_TIMEOUT_MS', integerIn(100, 600_000), '5000'),
      connectMs: read('DATABASE_CONNECT_TIMEOUT_MS', integerIn(100, 600_000), '5000'),
      idleMs: read('DATABASE_IDLE_TIMEOUT_MS', integerIn(1000, 3_600_000), '30000'),
      keepAliveMs: read('DATABASE_KEEPALIVE_MS', integerIn(0, 3_600_000), '10000'),
    },
    databaseStartTimeoutMs: read('DATABASE_START_TIMEOUT_MS', integerIn(0, 3_600_000), '60000'),
    migrateAtStart: read('MIGRATE_AT_START', readBoolean, 'true'),
    logLevel: read('LOG_LEVEL', readLogLevel, 'info'),
  };
}

/** Reads and validates what `npm run migrate` needs (no credentials); throws a ConfigError as loadConfig does. */
export function loadStoreConfig(env: Env): StoreConfig {
  const problems: string[] = [];
  const config = readStoreConfig(env, readerOf(env, problems), problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

/** Reads and validates the configuration; throws a ConfigError naming each bad or missing variable. */
export function loadConfig(env: Env): Config {
  const problems: string[] = [];
  const read = readerOf(env, problems);
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
  const config: Config = {
    port: read('PORT', integerIn(0, 65535), '3000'),
    host: read('HOST', readNonEmpty, '127.0.0.1'),
    ...readStoreConfig(env, read, problems),
    basicAuth: { username: read('BASIC_AUTH_USERNAME', readUsername), secret: readSecret() },
    authThrottle: {
      maxFailures: read('AUTH_MAX_FAILURES', integerIn(1, 1_000_000), '10'),
      windowMs: read('AUTH_FAILURE_WINDOW_SECONDS', integerIn(1, 86_400), '900') * 1000,
    },
    hashChecks: {
      concurrency: read('AUTH_HASH_CONCURRENCY', integerIn(1, 64), '2'),
      queue: read('AUTH_HASH_QUEUE', integerIn(0, 10_000), '32'),
    },
    searchQueue: read('SEARCH_QUEUE', integerIn(1, 100_000), String(SEARCHES_WAITING)),
    searchQueuePerClient: read('SEARCH_QUEUE_PER_CLIENT', integerIn(0, 100_000), '16'),
    searchBudgetMs: read('SEARCH_BUDGET_MS', integerIn(0, 10_000), String(SEARCH_BUDGET_MS)),
    // A sandbox takes a test suite's writes, thousands a minute from one address: no limit unless asked for.
    writesPerMinute: read('RATE_LIMIT_WRITES_PER_MINUTE', integerIn(0, 100_000_000), env.SANDBOX === 'true' ? '0' : '600'),
    sharedLimits: {
      redisUrl: env.REDIS_URL === undefined || env.REDIS_URL === '' ? undefined : read('REDIS_URL', readRedisUrl),
      keyPrefix: read('RATE_LIMIT_KEY_PREFIX', readKeyPrefix, 'user-records'),
      timeoutMs: read('RATE_LIMIT_STORE_TIMEOUT_MS', integerIn(10, 60_000), '500'),
    },
    corsOrigins: read('CORS_ORIGINS', readOrigins, ''),
    trustProxy: read('TRUST_PROXY', readHops, '0'),
    timeouts: {
      requestMs: read('REQUEST_TIMEOUT_MS', integerIn(1000, 3_600_000), '30000'),
      headersMs: read('HEADERS_TIMEOUT_MS', integerIn(500, 600_000), '10000'),
      keepAliveMs: read('KEEP_ALIVE_TIMEOUT_MS', integerIn(100, 600_000), '5000'),
      shutdownMs: read('SHUTDOWN_TIMEOUT_MS', integerIn(0, 600_000), '10000'),
      sendMs: read('SEND_TIMEOUT_MS', integerIn(1000, 3_600_000), '30000'),
    },
    maxRequestsPerSocket: read('MAX_REQUESTS_PER_SOCKET', integerIn(1, 1_000_000), '1000'),
    maxConnections: read('MAX_CONNECTIONS', integerIn(1, 1_000_000), '1000'),
    maxConnectionsPerClient: read('MAX_CONNECTIONS_PER_CLIENT', integerIn(0, 1_000_000), '100'),
    maxPipelinedRequests: read('MAX_PIPELINED_REQUESTS', integerIn(0, 10_000), '16'),
    basePath: read('BASE_PATH', readBasePath, ''),
    seedDemoData: read('SEED_DEMO_DATA', readBoolean, 'true'),
    usersFile: env.USERS_FILE === undefined || env.USERS_FILE === '' ? undefined : read('USERS_FILE', readNonEmpty),
    bodyLimitBytes: read('BODY_LIMIT_BYTES', integerIn(1, 10 * 1024 * 1024), String(DEFAULT_BODY_LIMIT_BYTES)),
    workers: read('WORKERS', readWorkers(availableParallelism()), '1'),
    idempotencyLockMs: read('IDEMPOTENCY_LOCK_SECONDS', integerIn(1, 3600), '30') * 1000,
    idempotencyKeysPerClient: read('IDEMPOTENCY_KEYS_PER_CLIENT', integerIn(1, 1_000_000), '1000'),
    // The variable names are OpenTelemetry's own, so that collectors' documentation applies as written.
    tracing:
      env.OTEL_EXPORTER_OTLP_ENDPOINT === undefined
        ? undefined
        : {
            endpoint: read('OTEL_EXPORTER_OTLP_ENDPOINT', readHttpUrl),
            serviceName: read('OTEL_SERVICE_NAME', readNonEmpty, 'user-records'),
            exportDelayMs: read('OTEL_BSP_SCHEDULE_DELAY', integerIn(10, 60_000), '5000'),
            exportTimeoutMs: read('OTEL_EXPORTER_OTLP_TIMEOUT', integerIn(100, 60_000), '10000'),
          },
    sandbox: read('SANDBOX', readBoolean, 'false') ? { latencyMs: read('SANDBOX_LATENCY_MS', readLatency, '0') } : undefined,
  };
  if (config.sandbox && config.database?.kind !== 'sqlite') problems.push('SANDBOX runs on SQLite (sqlite::memory: or a file), not PostgreSQL');
  if (config.sandbox && config.workers > 1) problems.push('SANDBOX runs in one process: its store is in memory (WORKERS must be 1)');
  if (config.timeouts.headersMs > config.timeouts.requestMs) {
    problems.push('HEADERS_TIMEOUT_MS must not be larger than REQUEST_TIMEOUT_MS');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}
