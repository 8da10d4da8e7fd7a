import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { destination } from 'pino';
import { withTestServer, type TestServer } from '../support/test-server.js';

// The access log: one JSON line per answered request, in the envelope of the service's other log lines.

interface LogLine {
  level: number;
  time: number;
  service: string;
  pid: number;
  msg: string;
  requestId?: string;
  method?: string;
  path?: string;
  operationId?: string;
  status?: number;
  durationMs?: number;
}

const scratch = mkdtempSync(join(tmpdir(), 'access-log-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs `work` against a server logging at `level` into a file of its own; returns the lines it logged. */
async function logsOf(level: string, work: (server: TestServer) => Promise<void>, name = `${level}-${Date.now()}-${Math.random()}.log`): Promise<LogLine[]> {
  const file = join(scratch, name);
  await withTestServer({ env: { LOG_LEVEL: level }, logTo: destination({ dest: file, sync: true }) }, work);
  // Every line must be JSON on its own: a reader that splits on newlines sees whole entries only.
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as LogLine);
}

const requests = (lines: LogLine[]) => lines.filter((line) => line.msg === 'request');

/** Sends a request line as given, bypassing fetch's URL normalisation; resolves with the status. */
function rawGet(server: TestServer, target: string): Promise<number> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.end(`GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('end', () => resolve(Number(answer.split(' ')[1])));
    socket.on('error', reject);
  });
}

test('each answered request gets one line with its id, route, outcome and duration, in the envelope of the other lines', async () => {
  const ids: string[] = [];
  const before = Date.now();
  const lines = await logsOf('info', async (server) => {
    for (const [path, headers] of [
      ['/users/1', { 'x-request-id': 'trace-7' }],
      ['/api/users/999999', {}],
      ['/nowhere', {}],
    ] as const) {
      const res = await fetch(`${server.url}${path}`, { headers });
      await res.arrayBuffer();
      ids.push(res.headers.get('x-request-id')!);
    }
  });
  expect(requests(lines)).toEqual([
    expect.objectContaining({ requestId: 'trace-7', method: 'GET', path: '/users/1', operationId: 'getUser', status: 200 }),
    expect.objectContaining({ requestId: ids[1], method: 'GET', path: '/api/users/999999', operationId: 'getDemoUser', status: 404 }),
    expect.objectContaining({ requestId: ids[2], method: 'GET', path: '/nowhere', operationId: 'none', status: 404 }),
  ]);
  for (const line of requests(lines)) {
    expect(Object.keys(line)).toEqual(['level', 'time', 'service', 'pid', 'requestId', 'method', 'path', 'operationId', 'status', 'durationMs', 'msg']);
    expect(line).toMatchObject({ level: 30, service: 'user-records', pid: process.pid });
    expect(line.time).toBeGreaterThanOrEqual(before);
    expect(line.time).toBeLessThanOrEqual(Date.now());
    expect(line.durationMs).toBeGreaterThan(0);
  }
});

test('a path with quotes and backslashes is escaped, so the line stays one JSON value', async () => {
  const statuses: number[] = [];
  const lines = await logsOf('info', async (server) => {
    statuses.push(await rawGet(server, '/users/a"b'), await rawGet(server, '/users/a\\"}b'));
  });
  expect(statuses).toEqual([400, 400]);
  expect(requests(lines).map((line) => line.path)).toEqual(['/users/a"b', '/users/a\\"}b']);
});

test('health probes are logged at debug only, and nothing is logged per request above info', async () => {
  const probe = async (server: TestServer) => {
    await (await fetch(`${server.url}/healthz`)).arrayBuffer();
    await (await fetch(`${server.url}/users/1`)).arrayBuffer();
  };
  const atInfo = await logsOf('info', probe);
  expect(requests(atInfo).map((line) => line.operationId)).toEqual(['getUser']);
  const atDebug = await logsOf('debug', probe);
  expect(requests(atDebug).map((line) => [line.operationId, line.level])).toEqual([
    ['getHealth', 20],
    ['getUser', 30],
  ]);
  expect(requests(await logsOf('warn', probe))).toEqual([]);
});

test('a client that hangs up in the middle of a streamed list is logged at info, not as a server failure', async () => {
  const lines = await logsOf(
    'info',
    async (server) => {
      // Megabytes of list: more than the socket buffers hold while the client reads nothing more.
      await sql`
      with recursive n(i) as (select 1 union all select i + 1 from n where i < 200000)
      insert into users (first_name, last_name, email, created_at, updated_at)
      select 'First' || i, 'Last' || i, 'user' || i || '@example.com', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z' from n
    `.execute(server.database.db);
      const socket = connect(server.port, '127.0.0.1');
      socket.on('error', () => undefined);
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write('GET /users HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: hang-up-1\r\n\r\n');
      await new Promise((resolve) => socket.once('data', resolve));
      socket.pause();
      socket.resetAndDestroy();
      const logged = Date.now() + 5000;
      while (!readFileSync(join(scratch, 'current.log'), 'utf8').includes('client closed') && Date.now() < logged) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    'current.log',
  );
  expect(lines.filter((line) => line.level >= 50)).toEqual([]);
  const hangUps = lines.filter((line) => line.msg === 'client closed the connection before the response was complete');
  expect(hangUps).toEqual([expect.objectContaining({ level: 30, requestId: 'hang-up-1', path: '/users' })]);
});
