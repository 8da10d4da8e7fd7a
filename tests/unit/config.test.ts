import { availableParallelism } from 'node:os';
import { ConfigError, loadConfig } from '../../server/config.js';

const required = { BASIC_AUTH_USERNAME: 'admin', BASIC_AUTH_PASSWORD: 's3cret' };

function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  test('defaults from DESIGN.md', () => {
    expect(loadConfig(required)).toEqual({
      port: 3000,
      host: '127.0.0.1',
      database: { kind: 'sqlite', filename: './data/users.sqlite' },
      storeTimeouts: { statementMs: 5000, connectMs: 5000, idleMs: 30_000, keepAliveMs: 10_000 },
      databaseStartTimeoutMs: 60_000,
      migrateAtStart: true,
      basicAuth: { username: 'admin', secret: { kind: 'password', password: 's3cret' } },
      authThrottle: { maxFailures: 10, windowMs: 900_000 },
      hashChecks: { concurrency: 2, queue: 32 },
      searchQueue: 256,
      searchQueuePerClient: 16,
      searchBudgetMs: 50,
      writesPerMinute: 600,
      sharedLimits: { redisUrl: undefined, keyPrefix: 'user-records', timeoutMs: 500 },
      corsOrigins: [],
      // On a loopback address (HOST's default): its IP addresses and localhost only, against DNS rebinding.
      allowedHosts: { any: false, names: new Set() },
      trustProxy: 0,
      timeouts: { requestMs: 30_000, headersMs: 10_000, keepAliveMs: 5000, shutdownMs: 10_000, sendMs: 30_000 },
      maxRequestsPerSocket: 1000,
      maxConnections: 1000,
      maxConnectionsPerClient: 100,
      maxPipelinedRequests: 16,
      basePath: '',
      seedDemoData: true,
      logLevel: 'info',
      bodyLimitBytes: 65536,
      workers: 1,
      idempotencyLockMs: 30_000,
      idempotencyKeysPerClient: 1000,
      tracing: undefined,
    });
  });

  test('WORKERS=auto runs one worker per CPU this process may use', () => {
    expect(loadConfig({ ...required, WORKERS: 'auto' }).workers).toBe(Math.min(availableParallelism(), 64));
  });

  test('the result is frozen', () => {
    expect(Object.isFrozen(loadConfig(required))).toBe(true);
  });

  test('reads every variable', () => {
    const config = loadConfig({
      ...required,
      PORT: '0',
      HOST: '0.0.0.0',
      DATABASE_URL: 'sqlite::memory:',
      BASE_PATH: '/v1/users-service',
      SEED_DEMO_DATA: 'false',
      LOG_LEVEL: 'silent',
      BODY_LIMIT_BYTES: '1024',
      WORKERS: '4',
      IDEMPOTENCY_LOCK_SECONDS: '5',
      IDEMPOTENCY_KEYS_PER_CLIENT: '50',
      SEND_TIMEOUT_MS: '5000',
      MAX_CONNECTIONS: '20000',
      MAX_CONNECTIONS_PER_CLIENT: '0',
      MAX_PIPELINED_REQUESTS: '0',
    });
    expect(config).toMatchObject({
      timeouts: { sendMs: 5000 },
      maxConnections: 20_000,
      maxConnectionsPerClient: 0,
      maxPipelinedRequests: 0,
      port: 0,
      host: '0.0.0.0',
      database: { kind: 'sqlite', filename: ':memory:' },
      basePath: '/v1/users-service',
      seedDemoData: false,
      logLevel: 'silent',
      bodyLimitBytes: 1024,
      workers: 4,
      idempotencyLockMs: 5000,
      idempotencyKeysPerClient: 50,
    });
  });

  test('refuses to start without credentials, naming the variables', () => {
    expect(problemsOf({})).toEqual([
      'BASIC_AUTH_USERNAME is required but not set',
      'set exactly one of BASIC_AUTH_PASSWORD and BASIC_AUTH_PASSWORD_HASH (neither is set)',
    ]);
    expect(problemsOf({ ...required, BASIC_AUTH_PASSWORD_HASH: 'x' })).toEqual([
      'set exactly one of BASIC_AUTH_PASSWORD and BASIC_AUTH_PASSWORD_HASH (both are set)',
    ]);
  });

  test('reads the password as an scrypt hash, never echoing a bad one', () => {
    const hash = 'scrypt$16384$8$1$c2FsdHNhbHRzYWx0c2FsdA==$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g=';
    const config = loadConfig({ BASIC_AUTH_USERNAME: 'admin', BASIC_AUTH_PASSWORD_HASH: hash });
    expect(config.basicAuth.secret).toMatchObject({ kind: 'hash', hash: { cost: 16384, blockSize: 8, parallelization: 1 } });
    expect(problemsOf({ BASIC_AUTH_USERNAME: 'admin', BASIC_AUTH_PASSWORD_HASH: 'hunter2' })).toEqual([
      'BASIC_AUTH_PASSWORD_HASH must be an scrypt hash made by `npm run hash-password`',
    ]);
  });

  test('reads the CORS origins, and refuses what is not an origin', () => {
    expect(loadConfig({ ...required, CORS_ORIGINS: 'https://app.example.com, http://localhost:5173' }).corsOrigins).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
    ]);
    expect(problemsOf({ ...required, CORS_ORIGINS: 'https://app.example.com/path' })[0]).toMatch(/^CORS_ORIGINS must be a comma-separated list of origins/);
    expect(problemsOf({ ...required, CORS_ORIGINS: '*' })[0]).toMatch(/^CORS_ORIGINS must be/);
  });

  test('headers must be due before the whole request', () => {
    expect(problemsOf({ ...required, HEADERS_TIMEOUT_MS: '20000', REQUEST_TIMEOUT_MS: '10000' })).toEqual([
      'HEADERS_TIMEOUT_MS must not be larger than REQUEST_TIMEOUT_MS',
    ]);
  });

  test.each([
    ['PORT', '70000', 'PORT must be an integer from 0 to 65535 (got "70000")'],
    ['PORT', 'http', 'PORT must be an integer from 0 to 65535 (got "http")'],
    ['DATABASE_URL', 'mysql://x', 'DATABASE_URL must be sqlite:<path>, sqlite::memory: or postgres://user@host:port/database'],
    ['DATABASE_URL', 'sqlite:', 'DATABASE_URL must name a file after "sqlite:"'],
    ['DATABASE_URL', 'postgres://user:pw@[bad', 'DATABASE_URL is not a valid URL'],
    ['DATABASE_POOL_SIZE', '0', 'DATABASE_POOL_SIZE must be an integer from 1 to 1000 (got "0")'],
    ['DATABASE_START_TIMEOUT_MS', '-1', 'DATABASE_START_TIMEOUT_MS must be an integer from 0 to 3600000 (got "-1")'],
    ['DATABASE_STATEMENT_TIMEOUT_MS', '50', 'DATABASE_STATEMENT_TIMEOUT_MS must be an integer from 100 to 600000 (got "50")'],
    ['DATABASE_CONNECT_TIMEOUT_MS', '5s', 'DATABASE_CONNECT_TIMEOUT_MS must be an integer from 100 to 600000 (got "5s")'],
    ['DATABASE_IDLE_TIMEOUT_MS', '0', 'DATABASE_IDLE_TIMEOUT_MS must be an integer from 1000 to 3600000 (got "0")'],
    ['DATABASE_KEEPALIVE_MS', '-1', 'DATABASE_KEEPALIVE_MS must be an integer from 0 to 3600000 (got "-1")'],
    ['BASE_PATH', 'v1', 'BASE_PATH must be empty or a path such as /v1 (no trailing slash) (got "v1")'],
    ['BASE_PATH', '/v1/', 'BASE_PATH must be empty or a path such as /v1 (no trailing slash) (got "/v1/")'],
    ['WORKERS', '0', 'WORKERS must be auto or an integer from 1 to 64 (got "0")'],
    ['WORKERS', '65', 'WORKERS must be auto or an integer from 1 to 64 (got "65")'],
    ['WORKERS', 'Auto', 'WORKERS must be auto or an integer from 1 to 64 (got "Auto")'],
    ['IDEMPOTENCY_LOCK_SECONDS', '0', 'IDEMPOTENCY_LOCK_SECONDS must be an integer from 1 to 3600 (got "0")'],
    ['IDEMPOTENCY_KEYS_PER_CLIENT', '0', 'IDEMPOTENCY_KEYS_PER_CLIENT must be an integer from 1 to 1000000 (got "0")'],
    ['SEED_DEMO_DATA', 'yes', 'SEED_DEMO_DATA must be true or false (got "yes")'],
    ['LOG_LEVEL', 'loud', 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")'],
    ['BASIC_AUTH_USERNAME', 'a:b', 'BASIC_AUTH_USERNAME must not contain ":" (RFC 7617) (got "a:b")'],
    ['BASIC_AUTH_USERNAME', '', 'BASIC_AUTH_USERNAME must not be empty (got "")'],
    // The contract bounds what names them: the greeting, Location and Link.
    ['BASIC_AUTH_USERNAME', 'é'.repeat(257), `BASIC_AUTH_USERNAME must be at most 256 characters (got "${'é'.repeat(257)}")`],
    ['BASE_PATH', `/${'a'.repeat(200)}`, `BASE_PATH must be at most 200 characters (got "/${'a'.repeat(200)}")`],
    ['BASIC_AUTH_PASSWORD', '', 'BASIC_AUTH_PASSWORD must not be empty'],
    ['TRUST_PROXY', 'yes', 'TRUST_PROXY must be a number of proxy hops from 0 to 10 (true = 1, false = 0) (got "yes")'],
    ['TRUST_PROXY', '11', 'TRUST_PROXY must be a number of proxy hops from 0 to 10 (true = 1, false = 0) (got "11")'],
    ['SEARCH_QUEUE', '0', 'SEARCH_QUEUE must be an integer from 1 to 100000 (got "0")'],
    ['SEARCH_BUDGET_MS', '-1', 'SEARCH_BUDGET_MS must be an integer from 0 to 10000 (got "-1")'],
    ['RATE_LIMIT_WRITES_PER_MINUTE', '-1', 'RATE_LIMIT_WRITES_PER_MINUTE must be an integer from 0 to 100000000 (got "-1")'],
    ['AUTH_HASH_CONCURRENCY', '0', 'AUTH_HASH_CONCURRENCY must be an integer from 1 to 64 (got "0")'],
    ['SEND_TIMEOUT_MS', '500', 'SEND_TIMEOUT_MS must be an integer from 1000 to 3600000 (got "500")'],
    ['MAX_CONNECTIONS', '0', 'MAX_CONNECTIONS must be an integer from 1 to 1000000 (got "0")'],
    ['MAX_CONNECTIONS_PER_CLIENT', '-1', 'MAX_CONNECTIONS_PER_CLIENT must be an integer from 0 to 1000000 (got "-1")'],
    ['MAX_PIPELINED_REQUESTS', '-1', 'MAX_PIPELINED_REQUESTS must be an integer from 0 to 10000 (got "-1")'],
  ])('%s=%j is refused', (name, value, message) => {
    expect(problemsOf({ ...required, [name]: value })).toEqual([message]);
  });

  test('TRUST_PROXY is a number of hops; true and false mean 1 and 0', () => {
    expect(loadConfig({ ...required, TRUST_PROXY: 'true' }).trustProxy).toBe(1);
    expect(loadConfig({ ...required, TRUST_PROXY: 'false' }).trustProxy).toBe(0);
    expect(loadConfig({ ...required, TRUST_PROXY: '2' }).trustProxy).toBe(2);
  });

  test('reads the abuse limits; 0 disables the write limit', () => {
    const config = loadConfig({ ...required, RATE_LIMIT_WRITES_PER_MINUTE: '0', AUTH_HASH_CONCURRENCY: '4', AUTH_HASH_QUEUE: '0', SEARCH_QUEUE: '8' });
    expect(config).toMatchObject({ writesPerMinute: 0, hashChecks: { concurrency: 4, queue: 0 }, searchQueue: 8 });
  });

  test("tracing is on with OTEL_EXPORTER_OTLP_ENDPOINT, with OpenTelemetry's own variables and defaults", () => {
    expect(loadConfig({ ...required, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing).toEqual({
      endpoint: 'http://collector:4318',
      serviceName: 'user-records',
      exportDelayMs: 5000,
      exportTimeoutMs: 10_000,
    });
    const env = {
      ...required,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c',
      OTEL_SERVICE_NAME: 'users-eu',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_EXPORTER_OTLP_TIMEOUT: '2000',
    };
    expect(loadConfig(env).tracing).toEqual({ endpoint: 'https://c', serviceName: 'users-eu', exportDelayMs: 100, exportTimeoutMs: 2000 });
    expect(problemsOf({ ...required, OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toEqual([
      'OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL (got "collector:4318")',
    ]);
  });

  test('SANDBOX turns sandbox mode on, with SANDBOX_LATENCY_MS as one number or a range', () => {
    expect(loadConfig(required).sandbox).toBeUndefined();
    expect(loadConfig({ ...required, SANDBOX: 'true' }).sandbox).toEqual({ latencyMs: { min: 0, max: 0 } });
    expect(loadConfig({ ...required, SANDBOX: 'true', SANDBOX_LATENCY_MS: '300' }).sandbox).toEqual({ latencyMs: { min: 300, max: 300 } });
    expect(loadConfig({ ...required, SANDBOX: 'true', SANDBOX_LATENCY_MS: '200-800' }).sandbox).toEqual({ latencyMs: { min: 200, max: 800 } });
    for (const bad of ['800-200', '20000', '1.5', '-5', 'slow']) {
      expect(problemsOf({ ...required, SANDBOX: 'true', SANDBOX_LATENCY_MS: bad })).toEqual([
        `SANDBOX_LATENCY_MS must be milliseconds (300) or a range (200-800), at most 10000 (got ${JSON.stringify(bad)})`,
      ]);
    }
  });

  test('a sandbox has no write limit unless one is given', () => {
    expect(loadConfig({ ...required, SANDBOX: 'true', DATABASE_URL: 'sqlite::memory:' }).writesPerMinute).toBe(0);
    expect(loadConfig({ ...required, SANDBOX: 'true', DATABASE_URL: 'sqlite::memory:', RATE_LIMIT_WRITES_PER_MINUTE: '5' }).writesPerMinute).toBe(5);
    expect(loadConfig(required).writesPerMinute).toBe(600);
  });

  test('SANDBOX runs in one process on SQLite', () => {
    expect(problemsOf({ ...required, SANDBOX: 'true', DATABASE_URL: 'postgres://u@localhost/db' })).toEqual([
      'SANDBOX runs on SQLite (sqlite::memory: or a file), not PostgreSQL',
    ]);
    expect(problemsOf({ ...required, SANDBOX: 'true', WORKERS: '2' })).toEqual(['SANDBOX runs in one process: its store is in memory (WORKERS must be 1)']);
  });

  test('a PostgreSQL URL selects PostgreSQL with a pool', () => {
    expect(loadConfig({ ...required, DATABASE_URL: 'postgres://app@db:5432/users' }).database).toEqual({
      kind: 'postgres',
      url: 'postgres://app@db:5432/users',
      poolSize: 10,
      poolMode: 'session',
    });
    expect(loadConfig({ ...required, DATABASE_URL: 'postgresql://db/users', DATABASE_POOL_SIZE: '25' }).database).toMatchObject({ poolSize: 25 });
  });

  test('DATABASE_POOL_MODE=transaction is for a pooler in transaction mode in front of PostgreSQL', () => {
    expect(loadConfig({ ...required, DATABASE_URL: 'postgres://app@pgbouncer:6432/users', DATABASE_POOL_MODE: 'transaction' }).database).toMatchObject({
      poolMode: 'transaction',
    });
    expect(problemsOf({ ...required, DATABASE_URL: 'postgres://app@pgbouncer:6432/users', DATABASE_POOL_MODE: 'statement' })).toEqual([
      'DATABASE_POOL_MODE must be one of session, transaction (got "statement")',
    ]);
    expect(problemsOf({ ...required, DATABASE_POOL_MODE: 'transaction' })).toEqual([
      'DATABASE_POOL_MODE applies to PostgreSQL only (DATABASE_URL names SQLite)',
    ]);
  });

  test('reads the store timeouts; keepalive 0 turns it off', () => {
    const config = loadConfig({
      ...required,
      DATABASE_STATEMENT_TIMEOUT_MS: '1500',
      DATABASE_CONNECT_TIMEOUT_MS: '2000',
      DATABASE_IDLE_TIMEOUT_MS: '60000',
      DATABASE_KEEPALIVE_MS: '0',
    });
    expect(config.storeTimeouts).toEqual({ statementMs: 1500, connectMs: 2000, idleMs: 60_000, keepAliveMs: 0 });
  });

  test('reads where the limits are shared; a bad REDIS_URL stops start-up without being echoed', () => {
    const env = { ...required, REDIS_URL: 'redis://:pw@cache:6379/2', RATE_LIMIT_KEY_PREFIX: 'users-eu', RATE_LIMIT_STORE_TIMEOUT_MS: '250' };
    expect(loadConfig(env).sharedLimits).toEqual({ redisUrl: 'redis://:pw@cache:6379/2', keyPrefix: 'users-eu', timeoutMs: 250 });
    expect(loadConfig({ ...required, REDIS_URL: '' }).sharedLimits.redisUrl).toBeUndefined();
    const problems = problemsOf({ ...required, REDIS_URL: 'http://:hunter2@cache', RATE_LIMIT_KEY_PREFIX: 'a:b', RATE_LIMIT_STORE_TIMEOUT_MS: '0' });
    expect(problems).toEqual([
      expect.stringMatching(/^REDIS_URL must be/),
      expect.stringMatching(/^RATE_LIMIT_KEY_PREFIX/),
      expect.stringMatching(/^RATE_LIMIT_STORE_TIMEOUT_MS/),
    ]);
    expect(problems.join()).not.toContain('hunter2');
  });

  test('the password of a database URL is never echoed', () => {
    expect(problemsOf({ ...required, DATABASE_URL: 'mysql://user:hunter2@db/x' }).join()).not.toContain('hunter2');
  });
});

test('ALLOWED_HOSTS: names, lower-cased; * for any; anything else is refused in one line', () => {
  const base = { BASIC_AUTH_USERNAME: 'admin', BASIC_AUTH_PASSWORD: 'x' };
  expect(loadConfig({ ...base, ALLOWED_HOSTS: 'Users.Example.com, api.example.com' }).allowedHosts).toEqual({
    any: false,
    names: new Set(['users.example.com', 'api.example.com']),
  });
  expect(loadConfig({ ...base, ALLOWED_HOSTS: '*' }).allowedHosts).toEqual({ any: true });
  expect(loadConfig({ ...base, HOST: '0.0.0.0' }).allowedHosts).toEqual({ any: true });
  expect(loadConfig({ ...base, HOST: '::1' }).allowedHosts).toEqual({ any: false, names: new Set() });
  for (const bad of ['https://users.example.com', 'users.example.com:443', 'a b', ','])
    expect(() => loadConfig({ ...base, ALLOWED_HOSTS: bad })).toThrow(/ALLOWED_HOSTS must be \* or a comma-separated list of host names/);
});
