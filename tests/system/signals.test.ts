import { connect, createServer } from 'node:net';
import { buildUserInput } from '../support/builders.js';
import { childrenOf, processTree, startServerCommand, type ServerProcess } from '../support/server-process.js';
import { createTestStore, type TestStore } from '../support/test-store.js';

// The commands the README documents, stopped the way a supervisor or a container runtime stops them: a signal
// to exactly the PID the command created. Nothing of the process tree may survive it, and the port is free.

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const portIsFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });

async function survivorsAfter(server: ServerProcess, tree: number[], signal: NodeJS.Signals, toGroup = false): Promise<number[]> {
  process.kill(toGroup ? -server.pid : server.pid, signal);
  return survivorsOf(server, tree);
}

/** The processes of the tree still running once the command has exited (or 15 s have passed), and 5 s more. */
async function survivorsOf(server: ServerProcess, tree: number[]): Promise<number[]> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([server.exited, new Promise((resolve) => (timer = setTimeout(resolve, 15_000)))]);
  clearTimeout(timer);
  for (let tries = 0; tries < 50 && tree.some(alive); tries++) await new Promise((resolve) => setTimeout(resolve, 100));
  return tree.filter(alive);
}

let store: TestStore;
let server: ServerProcess | undefined;
let tree: number[] = [];
beforeEach(async () => {
  store = await createTestStore('sqlite');
});
afterEach(async () => {
  // Whatever a failing test left running, by the PIDs it started.
  for (const pid of tree.filter(alive)) process.kill(pid, 'SIGKILL');
  tree = [];
  server = undefined;
  await store.drop();
});

const cases: Array<[string, string[], NodeJS.Signals, boolean]> = [
  ['npm start', ['npm', 'start', '--silent'], 'SIGTERM', false],
  ['npm start', ['npm', 'start', '--silent'], 'SIGINT', false],
  ['npm start (Ctrl-C: SIGINT to the whole process group)', ['npm', 'start', '--silent'], 'SIGINT', true],
  ['make run', ['make', '-o', 'build', 'run'], 'SIGTERM', false],
];

test.each(cases.map(([name, command, signal, toGroup]) => [`${name}: ${signal}`, command, signal, toGroup] as const))(
  '%s, with WORKERS=2, stops the primary and every worker, and frees the port',
  async (_title, command, signal, toGroup) => {
    server = await startServerCommand(command, store, { WORKERS: '2' });
    tree = processTree(server.pid);
    const port = Number(new URL(server.url).port);
    expect(tree.length).toBeGreaterThanOrEqual(4); // the command, the primary, two workers
    expect(await survivorsAfter(server, tree, signal, toGroup)).toEqual([]);
    expect([0, signal]).toContain(await server.exited); // make re-raises the signal it passed on
    expect(await portIsFree(port)).toBe(true);
    const logs = server.output();
    // Each worker says where it listens, and where the reference page is.
    expect(logs).toContain(`"docs":"${server.url}/docs"`);
    expect(logs.match(/"msg":"shutting down"/g)).toHaveLength(3); // the primary and both workers, once each
  },
  40_000,
);

test('a worker that cannot stop is killed SHUTDOWN_TIMEOUT_MS + 5 s after the signal, and the primary still exits', async () => {
  server = await startServerCommand([process.execPath, 'dist/server/main.js'], store, { WORKERS: '2', SHUTDOWN_TIMEOUT_MS: '0' });
  tree = processTree(server.pid);
  const [stuck = 0] = childrenOf(server.pid);
  process.kill(stuck, 'SIGSTOP'); // it cannot run its shutdown, as a worker whose event loop is blocked
  const started = Date.now();
  expect(await survivorsAfter(server, tree, 'SIGTERM')).toEqual([]);
  expect(Date.now() - started).toBeGreaterThanOrEqual(4500);
  expect(Date.now() - started).toBeLessThan(15_000);
  expect(server.output()).toMatch(new RegExp(`"workerPid":${stuck}[^\\n]*"msg":"worker did not stop in time; killing it"`));
}, 40_000);

test('Ctrl-C (SIGINT to the process group, so each worker gets it twice) lets a request in flight finish', async () => {
  server = await startServerCommand(['npm', 'start', '--silent'], store, { WORKERS: '2', SHUTDOWN_TIMEOUT_MS: '5000' });
  tree = processTree(server.pid);
  const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
  socket.on('error', () => undefined);
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
  const closed = new Promise((resolve) => socket.once('close', resolve));
  const body = JSON.stringify(buildUserInput());
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(`POST /users HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`);
  await new Promise((resolve) => setTimeout(resolve, 300));
  process.kill(-server.pid, 'SIGINT');
  const signalled = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 500));
  socket.write(body.slice(5));
  expect(await survivorsOf(server, tree)).toEqual([]);
  await closed;
  expect(answer).toMatch(/^HTTP\/1\.1 201 /);
  // Answered during the shutdown, so the connection closes with it rather than idling until the deadline.
  expect(answer).toMatch(/^connection: close$/im);
  expect(Date.now() - signalled).toBeLessThan(4000);
}, 40_000);
