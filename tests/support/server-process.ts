import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testEnv } from './test-server.js';
import { createTestStore, type TestStore } from './test-store.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MAIN = fileURLToPath(new URL('../../dist/server/main.js', import.meta.url));

/** The built server running as a process of its own, as operators run it (`npm start`). */
export interface ServerProcess {
  readonly url: string;
  readonly pid: number;
  /** Everything the process printed so far (JSON log lines). */
  readonly output: () => string;
  /** Resolves with the exit code (or the signal) once the process is gone. */
  readonly exited: Promise<number | NodeJS.Signals>;
  /** Stops reading the process's output, as a log shipper that stalls would: its pipe fills up. */
  pauseOutput(): void;
  resumeOutput(): void;
  /** Sends a signal and waits for the process to exit. */
  stop(signal?: NodeJS.Signals): Promise<number | NodeJS.Signals>;
}

function waitForListening(child: ChildProcess, output: () => string, workers: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start within 30 s:\n${output()}`)), 30_000);
    const check = () => {
      const urls = [...output().matchAll(/"url":"([^"]+)"[^\n]*"msg":"user records service listening"/g)];
      if (urls.length >= workers) {
        clearTimeout(timer);
        child.stdout?.off('data', check);
        resolve(urls[0]![1]!);
      }
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited with ${code} before listening:\n${output()}`));
    });
  });
}

/** Starts `node dist/server/main.js` on the store; resolves once every worker listens. */
export function startServerProcess(store: TestStore, env: Record<string, string> = {}): Promise<ServerProcess> {
  return startServerCommand([process.execPath, MAIN], store, env);
}

/** Starts `node dist/server/main.js` as startServerProcess does, in another folder (where its settings file is). */
export function startServerProcessIn(folder: string, store: TestStore, env: Record<string, string> = {}): Promise<ServerProcess> {
  return launchServer([process.execPath, MAIN], store, env, folder).started;
}

/**
 * Starts the server with a command an operator would type (`npm start`, `make run`), from the repository,
 * in a process group of its own; resolves once every worker listens. `pid` is the command's own.
 */
export async function startServerCommand(command: readonly string[], store: TestStore, env: Record<string, string> = {}): Promise<ServerProcess> {
  return launchServer(command, store, env).started;
}

/**
 * Starts `node dist/server/main.js` as startServerProcess does, and gives its output before it listens too:
 * for tests that act on what a start is doing (a retry it logged) rather than after a guessed time.
 */
export function launchServerProcess(store: TestStore, env: Record<string, string> = {}): { output: () => string; started: Promise<ServerProcess> } {
  return launchServer([process.execPath, MAIN], store, env);
}

function launchServer(
  command: readonly string[],
  store: TestStore,
  env: Record<string, string>,
  folder = ROOT,
): { output: () => string; started: Promise<ServerProcess> } {
  const { child, output, exited } = spawnServer(command, store, env, folder);
  return { output, started: listening(child, output, exited, Number(env.WORKERS ?? 1)) };
}

async function listening(child: ChildProcess, output: () => string, exited: Promise<number | NodeJS.Signals>, workers: number): Promise<ServerProcess> {
  const url = await waitForListening(child, output, workers);
  return {
    url,
    pid: child.pid!,
    output,
    exited,
    pauseOutput: () => child.stdout!.pause(),
    resumeOutput: () => child.stdout!.resume(),
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * Runs `node dist/server/main.js` (or another entry point of dist/, from the project's root) on the store until
 * it exits by itself (a start that fails), killing it after `withinMs`; resolves with its exit code and
 * everything it printed.
 */
export async function runServerToExit(
  store: TestStore,
  env: Record<string, string>,
  withinMs: number,
  entry?: string,
): Promise<{ code: number | NodeJS.Signals; output: string }> {
  const { child, output, exited } = spawnServer([process.execPath, entry ? join(ROOT, entry) : MAIN], store, env);
  const timer = setTimeout(() => child.kill('SIGKILL'), withinMs);
  const code = await exited;
  clearTimeout(timer);
  return { code, output: output() };
}

/**
 * Spawns the server command with the test environment, collecting everything it prints. From the repository
 * it reads no settings file (a developer's .env there must not change what is tested) unless `env` names one.
 */
function spawnServer(command: readonly string[], store: TestStore, env: Record<string, string>, folder = ROOT) {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`make build\` (make test does) before these tests`);
  const [file = '', ...args] = command;
  const child = spawn(file, args, {
    cwd: folder,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...(folder === ROOT ? { ENV_FILE: '' } : {}),
      ...testEnv(store, { LOG_LEVEL: 'debug', ...env }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: file !== process.execPath,
  });
  let printed = '';
  child.stdout!.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  const output = () => printed;
  const exited = new Promise<number | NodeJS.Signals>((resolve) =>
    child.once('exit', (code, signal) => {
      // Into the run's log, which global-teardown.js scans for credentials.
      if (process.env.TEST_LOG_FILE) appendFileSync(process.env.TEST_LOG_FILE, printed);
      resolve(code ?? signal!);
    }),
  );
  return { child, output, exited };
}

/** The processes `pid` started (a cluster primary's workers, npm's node), from ps. */
export function childrenOf(pid: number): number[] {
  try {
    return execFileSync('ps', ['--ppid', String(pid), '-o', 'pid='])
      .toString()
      .trim()
      .split(/\s+/)
      .map(Number);
  } catch {
    return []; // ps exits 1 when there are none
  }
}

/** A process and every process under it. */
export const processTree = (pid: number): number[] => [pid, ...childrenOf(pid).flatMap(processTree)];

/**
 * For a suite whose every test runs the built server over an SQLite store of its own: a new store before each
 * test; after it, the server it started through `start` stopped (unless it is gone already) and the store dropped.
 */
export function serverOnNewSqliteStore(): {
  readonly store: TestStore;
  /** Starts the server (on the test's store, or on `on`), stopping the one started before. */
  start(env?: Record<string, string>, on?: TestStore): Promise<ServerProcess>;
  /** Stops the server started last, if it still runs. */
  stop(): Promise<void>;
} {
  let store: TestStore | undefined;
  let server: ServerProcess | undefined;
  const stop = async () => {
    const running = server;
    server = undefined;
    await running?.stop();
  };
  beforeEach(async () => {
    store = await createTestStore('sqlite');
  });
  afterEach(async () => {
    await stop();
    await store?.drop();
  });
  return {
    get store() {
      return store!;
    },
    async start(env = {}, on = store!) {
      await stop();
      server = await startServerProcess(on, env);
      return server;
    },
    stop,
  };
}
