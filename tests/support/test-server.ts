import { destination as fileDestination, type DestinationStream } from 'pino';
import { loadConfig } from '../../server/config.js';
import { createLogger } from '../../server/logger.js';
import { startServer, type RunningServer } from '../../server/server.js';
import { httpClient, type HttpClient } from './http-client.js';
import { createTestStore, type Dialect, type TestStore } from './test-store.js';

/** Credentials every test server accepts. */
export const TEST_CREDENTIALS = { username: 'tester', password: 'correct horse battery staple' } as const;

/** A real server on port 0 over a real database of its own. */
export interface TestServer extends RunningServer {
  readonly store: TestStore;
  /** Stops the server; the store stays until `cleanup`, for a restart on the same data. */
  stop(): Promise<void>;
  /** Stops the server if it runs and drops its store. */
  cleanup(): Promise<void>;
}

/** How to start a test server: on which database, with which extra environment. */
export interface TestServerOptions {
  readonly dialect?: Dialect;
  /** Start on the store of an earlier server instead of a new one. */
  readonly store?: TestStore;
  /** Environment variables, e.g. `{ SEED_DEMO_DATA: 'false' }`. */
  readonly env?: Record<string, string>;
  /** Where the server's JSON log lines go; by default the run's log file (see global-setup.js), if any. */
  readonly logTo?: DestinationStream;
}

/** Every test server of a run logs at debug level into one file, which global-teardown.js scans for secrets. */
function runLog(): DestinationStream | undefined {
  const file = process.env.TEST_LOG_FILE;
  return file ? fileDestination({ dest: file, append: true, sync: true }) : undefined;
}

/** The environment of a test server on the given store. */
export function testEnv(store: TestStore, env: Record<string, string> = {}): Record<string, string> {
  // A hashed password replaces the plain one: the server takes exactly one of them.
  const password: Record<string, string> = env.BASIC_AUTH_PASSWORD_HASH === undefined ? { BASIC_AUTH_PASSWORD: TEST_CREDENTIALS.password } : {};
  return {
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: store.url,
    BASIC_AUTH_USERNAME: TEST_CREDENTIALS.username,
    ...password,
    LOG_LEVEL: 'silent',
    // Many suites write and search thousands of times, over hundreds of connections, from one address; these
    // per-client limits have tests of their own (write-limit.test.ts, hostile-clients.test.ts,
    // search-fairness.test.ts).
    RATE_LIMIT_WRITES_PER_MINUTE: '0',
    MAX_CONNECTIONS_PER_CLIENT: '0',
    SEARCH_QUEUE_PER_CLIENT: '0',
    ...env,
  };
}

/** Starts a server in this process, listening on a free port. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const store = options.store ?? (await createTestStore(options.dialect ?? 'sqlite'));
  const destination = options.logTo ?? runLog();
  const config = loadConfig(testEnv(store, { ...(destination ? { LOG_LEVEL: 'debug' } : {}), ...options.env }));
  const server = await startServer(config, createLogger(config.logLevel, destination));
  let running = true;
  const stop = async () => {
    if (running) await server.close();
    running = false;
  };
  return {
    ...server,
    store,
    stop,
    async cleanup() {
      await stop();
      await store.drop();
    },
  };
}

/** A server and a contract-checking client for it. */
export interface ServerUnderTest {
  readonly server: TestServer;
  readonly api: HttpClient;
}

/** Starts one server for the enclosing file or describe block (beforeAll) and removes it afterwards. */
export function useTestServer(options: TestServerOptions = {}): ServerUnderTest {
  const current: { server?: TestServer; api?: HttpClient } = {};
  beforeAll(async () => {
    current.server = await startTestServer(options);
    current.api = httpClient(current.server.url);
  });
  afterAll(() => current.server?.cleanup());
  return {
    get server() {
      return current.server!;
    },
    get api() {
      return current.api!;
    },
  };
}

/** Runs `work` against a server of its own, then removes the server and its store. */
export async function withTestServer<T>(options: TestServerOptions, work: (server: TestServer, api: HttpClient) => Promise<T>): Promise<T> {
  const server = await startTestServer(options);
  try {
    return await work(server, httpClient(server.url));
  } finally {
    await server.cleanup();
  }
}
