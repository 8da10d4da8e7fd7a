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
      basicAuth: { username: 'admin', secret: { kind: 'password', password: 's3cret' } },
      authThrottle: { maxFailures: 10, windowMs: 900_000 },
      corsOrigins: [],
      trustProxy: false,
      timeouts: { requestMs: 30_000, headersMs: 10_000, keepAliveMs: 5000, shutdownMs: 10_000 },
      maxRequestsPerSocket: 1000,
      basePath: '',
      seedDemoData: true,
      logLevel: 'info',
      bodyLimitBytes: 65536,
      workers: 1,
    });
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
    });
    expect(config).toMatchObject({
      port: 0,
      host: '0.0.0.0',
      database: { kind: 'sqlite', filename: ':memory:' },
      basePath: '/v1/users-service',
      seedDemoData: false,
      logLevel: 'silent',
      bodyLimitBytes: 1024,
      workers: 4,
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
    ['BASE_PATH', 'v1', 'BASE_PATH must be empty or a path such as /v1 (no trailing slash) (got "v1")'],
    ['BASE_PATH', '/v1/', 'BASE_PATH must be empty or a path such as /v1 (no trailing slash) (got "/v1/")'],
    ['WORKERS', '0', 'WORKERS must be an integer from 1 to 64 (got "0")'],
    ['SEED_DEMO_DATA', 'yes', 'SEED_DEMO_DATA must be true or false (got "yes")'],
    ['LOG_LEVEL', 'loud', 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")'],
    ['BASIC_AUTH_USERNAME', 'a:b', 'BASIC_AUTH_USERNAME must not contain ":" (RFC 7617) (got "a:b")'],
    ['BASIC_AUTH_USERNAME', '', 'BASIC_AUTH_USERNAME must not be empty (got "")'],
    ['BASIC_AUTH_PASSWORD', '', 'BASIC_AUTH_PASSWORD must not be empty'],
  ])('%s=%j is refused', (name, value, message) => {
    expect(problemsOf({ ...required, [name]: value })).toEqual([message]);
  });

  test('a PostgreSQL URL selects PostgreSQL with a pool', () => {
    expect(loadConfig({ ...required, DATABASE_URL: 'postgres://app@db:5432/users' }).database).toEqual({
      kind: 'postgres',
      url: 'postgres://app@db:5432/users',
      poolSize: 10,
    });
    expect(loadConfig({ ...required, DATABASE_URL: 'postgresql://db/users', DATABASE_POOL_SIZE: '25' }).database).toMatchObject({ poolSize: 25 });
  });

  test('the password of a database URL is never echoed', () => {
    expect(problemsOf({ ...required, DATABASE_URL: 'mysql://user:hunter2@db/x' }).join()).not.toContain('hunter2');
  });
});
