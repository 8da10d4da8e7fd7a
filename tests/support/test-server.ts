import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../server/config.js';
import { createLogger } from '../../server/logger.js';
import { startServer, type RunningServer } from '../../server/server.js';
import { httpClient, type HttpClient } from './http-client.js';

/** Credentials every test server accepts. */
export const TEST_CREDENTIALS = { username: 'tester', password: 'correct horse battery staple' } as const;

/** A real server on port 0 over a real SQLite file in its own temporary folder. */
export interface TestServer extends RunningServer {
  readonly dir: string;
  /** Stops the server; the folder (and its database) stays until `cleanup`. */
  stop(): Promise<void>;
  /** Stops the server if it runs and deletes its folder. */
  cleanup(): Promise<void>;
}

/** Environment of a test server; override any variable, e.g. `{ SEED_DEMO_DATA: 'false' }`. */
export function testEnv(dir: string, overrides: Record<string, string> = {}): Record<string, string> {
  return {
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: `sqlite:${join(dir, 'users.sqlite')}`,
    BASIC_AUTH_USERNAME: TEST_CREDENTIALS.username,
    BASIC_AUTH_PASSWORD: TEST_CREDENTIALS.password,
    LOG_LEVEL: 'silent',
    ...overrides,
  };
}

/** Starts a server; pass `dir` to start again on the database of an earlier one. */
export async function startTestServer(overrides: Record<string, string> = {}, dir?: string): Promise<TestServer> {
  const folder = dir ?? mkdtempSync(join(tmpdir(), 'user-records-'));
  const config = loadConfig(testEnv(folder, overrides));
  const server = await startServer(config, createLogger(config.logLevel));
  let running = true;
  const stop = async () => {
    if (running) await server.close();
    running = false;
  };
  return {
    ...server,
    dir: folder,
    stop,
    async cleanup() {
      await stop();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** A server and a contract-checking client for it. */
export interface ServerUnderTest {
  readonly server: TestServer;
  readonly api: HttpClient;
}

/** Starts one server for the enclosing file or describe block (beforeAll) and removes it afterwards. */
export function useTestServer(overrides: Record<string, string> = {}): ServerUnderTest {
  const current: { server?: TestServer; api?: HttpClient } = {};
  beforeAll(async () => {
    current.server = await startTestServer(overrides);
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

/** Runs `work` against a server of its own, then removes the server and its database. */
export async function withTestServer<T>(
  overrides: Record<string, string>,
  work: (server: TestServer, api: HttpClient) => Promise<T>,
): Promise<T> {
  const server = await startTestServer(overrides);
  try {
    return await work(server, httpClient(server.url));
  } finally {
    await server.cleanup();
  }
}
