import { seedUsers } from '../support/bulk-seed.js';
import { openSockets, rssMiB, STALL_BOUND_MS, startProbe, timedGet } from '../support/liveness-probe.js';
import { nonReader, open, reader, until, type Held } from '../support/raw-connections.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { createTestStore, type TestStore } from '../support/test-store.js';

// Clients that ask for much and read nothing must cost the server a bounded amount of memory and time, and
// never lock legitimate clients out: the built server runs as a process, so that its memory can be read.

const NON_READERS = 10;

let store: TestStore;
let server: ServerProcess | undefined;
const held: Held[] = [];
beforeEach(async () => {
  store = await createTestStore('sqlite');
});
afterEach(async () => {
  for (const { socket } of held.splice(0)) socket.destroy();
  await server?.stop();
  server = undefined;
  await store.drop();
});

async function start(users: number, env: Record<string, string>): Promise<ServerProcess> {
  await (await startServerProcess(store, { LOG_LEVEL: 'info' })).stop();
  seedUsers(store, users);
  server = await startServerProcess(store, { LOG_LEVEL: 'info', ...env });
  return server;
}

test('two connections that pipeline 1,900 full lists each and read nothing cost under 200 MB', async () => {
  const { url, pid } = await start(990, {});
  const before = rssMiB(pid);
  const baseline = openSockets(pid);
  const probe = startProbe(`${url}/healthz`);
  const flood = 'GET /users HTTP/1.1\r\nHost: localhost\r\n\r\n'.repeat(1900);
  held.push(...(await Promise.all([nonReader(url, flood), nonReader(url, flood)])));
  let peak = before;
  const sample = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 100);
  await new Promise((resolve) => setTimeout(resolve, 4000));
  clearInterval(sample);
  const { slowestMs } = await probe.stop();
  expect(peak - before).toBeLessThan(200);
  expect(slowestMs).toBeLessThan(STALL_BOUND_MS);
  // Past MAX_PIPELINED_REQUESTS waiting, the connections were closed, and the operator was told.
  expect(openSockets(pid)).toBeLessThanOrEqual(baseline);
  expect(server!.output()).toContain('too many pipelined requests waiting');
  expect((await timedGet(`${url}/users/1`)).status).toBe(200);
}, 40_000);

test('a connection that keeps pipelining behind a list it does not read is closed, not buffered', async () => {
  // The first answer (7.5 MB) stalls, so the connection stays open while more requests keep arriving.
  const { url, pid } = await start(100_000, {});
  const before = rssMiB(pid);
  const connection = await nonReader(url, '');
  held.push(connection);
  const burst = 'GET /users HTTP/1.1\r\nHost: localhost\r\n\r\n'.repeat(100);
  const flood = setInterval(() => !connection.socket.destroyed && connection.socket.write(burst), 10);
  let peak = before;
  const sample = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 100);
  await new Promise((resolve) => setTimeout(resolve, 2500));
  clearInterval(flood);
  clearInterval(sample);
  expect(peak - before).toBeLessThan(200);
  expect(connection.socket.destroyed).toBe(true);
}, 30_000);

test('pipelined requests within the limit are all answered, in order', async () => {
  const { url } = await start(0, { MAX_PIPELINED_REQUESTS: '16' });
  const ids = Array.from({ length: 17 }, (_, i) => (i % 12) + 1);
  const connection = await reader(url, ids.map((id) => `GET /users/${id} HTTP/1.1\r\nHost: localhost\r\n\r\n`).join(''));
  held.push(connection);
  await until(() => (connection.received.match(/HTTP\/1\.1 200/g) ?? []).length === ids.length, 5000);
  expect([...connection.received.matchAll(/"id":(\d+)/g)].map((match) => Number(match[1]))).toEqual(ids);
  expect(connection.closed).toBe(false);
});

test('connections that never read their responses are closed after SEND_TIMEOUT_MS, and others are served meanwhile', async () => {
  // 100,000 users make a list of 7.5 MB, more than the kernel buffers for one loopback connection (about 4 MB):
  // each response stalls with the server. 10 of them is 40 MB of kernel memory (1,100 would push a shared
  // machine into TCP memory pressure, where the kernel resets connections of its own accord) and 75 MB of
  // JSON to write first, which is CPU time that no limit can save.
  const { url, pid } = await start(100_000, { SEND_TIMEOUT_MS: '3000' });
  const baseline = { sockets: openSockets(pid), rss: rssMiB(pid) };
  held.push(...(await Promise.all(Array.from({ length: NON_READERS }, () => nonReader(url, 'GET /users HTTP/1.1\r\nHost: localhost\r\n\r\n')))));
  const probe = startProbe(`${url}/healthz`);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const during = { sockets: openSockets(pid), rss: rssMiB(pid) };
  // Held past the keep-alive timeout (5 s), the request timeout (30 s) and any other, before the fix.
  expect((await timedGet(`${url}/users/1`)).status).toBe(200);
  // A condition, not a time: on a busy machine writing 75 MB of JSON first takes longer.
  await until(() => openSockets(pid) <= baseline.sockets, 60_000);
  const after = openSockets(pid);
  await until(() => server!.output().includes('closed a connection that stopped reading its response'), 2000);
  const { slowestMs, statuses } = await probe.stop();
  expect(during.sockets).toBeGreaterThanOrEqual(baseline.sockets + NON_READERS);
  expect(after).toBeLessThanOrEqual(baseline.sockets);
  expect(statuses.every((status) => status === 200)).toBe(true);
  expect(slowestMs).toBeLessThan(STALL_BOUND_MS);
  expect(during.rss - baseline.rss).toBeLessThan(200);
  expect(server!.output()).toContain('closed a connection that stopped reading its response');
}, 120_000);

test('a client that reads slowly but steadily is not cut by the send timeout', async () => {
  // The send timeout counts time without progress, not the length of a response: pauses of 400 ms, each
  // shorter than SEND_TIMEOUT_MS, over a response that takes far longer than it in all.
  const { url } = await start(100_000, { SEND_TIMEOUT_MS: '1000' });
  const connection = await open(url, 'GET /users HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
  held.push(connection);
  const started = performance.now();
  const chunks: Buffer[] = [];
  let sincePause = 0;
  let pauses = 0;
  connection.socket.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    sincePause += chunk.length;
    if (sincePause < 1024 * 1024) return;
    sincePause = 0;
    pauses++;
    connection.socket.pause();
    setTimeout(() => connection.socket.resume(), 400);
  });
  await until(() => connection.closed, 20_000);
  const response = Buffer.concat(chunks).toString();
  // The whole response took longer than the send timeout several times over, and was not cut: its pauses
  // alone (one per MiB of its 7 MiB) outlast it twice, however fast the machine sends the rest. A bound on the
  // whole time (3 s) failed where sending took less than 200 ms besides the 2.8 s of pauses.
  expect(pauses * 400).toBeGreaterThan(2 * 1000);
  expect(performance.now() - started).toBeGreaterThan(pauses * 400);
  expect(response).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  // Chunked: the array ends with the last user, then the last chunk.
  expect(response).toMatch(/"firstName":"Bulk99999","lastName":"User","email":"bulk99999@example.com"\}\]\r\n0\r\n\r\n$/);
}, 30_000);

test('past MAX_CONNECTIONS (1,000 by default) a connection is refused with a 503 problem, and served once others close', async () => {
  const { url } = await start(0, { KEEP_ALIVE_TIMEOUT_MS: '60000', MAX_CONNECTIONS_PER_CLIENT: '0' });
  const healthz = 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n';
  for (let i = 0; i < 1100; i += 100) held.push(...(await Promise.all(Array.from({ length: 100 }, () => reader(url, healthz)))));
  await until(
    () => held.every((connection) => connection.received.startsWith('HTTP/1.1') && (connection.received.includes('"status":"ok"') || connection.closed)),
    10_000,
  );
  const served = held.filter((connection) => connection.received.startsWith('HTTP/1.1 200'));
  const refused = held.filter((connection) => connection.received.startsWith('HTTP/1.1 503'));
  expect(served).toHaveLength(1000);
  expect(refused).toHaveLength(100);
  expect(refused.every((connection) => connection.closed)).toBe(true);
  const answer = refused[0]!.received;
  expect(answer).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
  expect(answer).toMatch(/\r\nContent-Type: application\/problem\+json\r\n/);
  expect(answer).toMatch(/\r\nRetry-After: 5\r\n/);
  expect(answer).toMatch(/\r\nConnection: close\r\n/);
  expect(answer).toContain('"type":"urn:user-records:problem:too-many-connections"');
  expect(server!.output()).toContain('refused a connection: MAX_CONNECTIONS are open');
  for (const connection of served) connection.socket.destroy();
  await until(() => false, 300);
  const metrics = await (await fetch(`${url}/metrics`)).text();
  expect(metrics).toMatch(/^http_connections_limited_total\{limit="max_connections"\} 100$/m);
}, 40_000);

test('one client cannot take every connection: past MAX_CONNECTIONS_PER_CLIENT busy ones it is refused, and others are still served', async () => {
  const { url } = await start(0, { KEEP_ALIVE_TIMEOUT_MS: '60000', MAX_CONNECTIONS_PER_CLIENT: '50' });
  const healthz = 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n';
  // Each of the hog's connections is busy: a request under way, its head never finished (an idle one would give
  // its place to the next, see client-connections.test.ts).
  held.push(...(await Promise.all(Array.from({ length: 60 }, () => reader(url, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n', '127.0.0.2')))));
  const other = await Promise.all(Array.from({ length: 5 }, () => reader(url, healthz, '127.0.0.3')));
  held.push(...other);
  const fromHog = held.slice(0, 60);
  await until(
    () => other.every((connection) => connection.received.includes('"status":"ok"')) && fromHog.filter((connection) => connection.closed).length >= 10,
    10_000,
  );
  expect(fromHog.filter((connection) => !connection.closed)).toHaveLength(50);
  const refused = fromHog.filter((connection) => connection.received.startsWith('HTTP/1.1 503'));
  expect(refused).toHaveLength(10);
  expect(refused[0]!.received).toContain('"detail":"This client holds as many connections as it may; close one, or retry later."');
  expect(other.every((connection) => connection.received.startsWith('HTTP/1.1 200'))).toBe(true);
  expect(server!.output()).toContain('refused a connection: the client holds MAX_CONNECTIONS_PER_CLIENT');
  // A connection that closes gives its place back.
  for (const connection of fromHog) connection.socket.destroy();
  await until(() => false, 300);
  const again = await reader(url, healthz, '127.0.0.2');
  held.push(again);
  await until(() => again.received.includes('"status":"ok"'), 5000);
  const metrics = await (await fetch(`${url}/metrics`)).text();
  expect(metrics).toMatch(/^http_connections_limited_total\{limit="max_connections_per_client"\} 10$/m);
}, 30_000);

test('a MAX_CONNECTIONS the open-file limit cannot serve is warned about at start-up', async () => {
  server = await startServerProcess(store, { LOG_LEVEL: 'info', MAX_CONNECTIONS: '1000000' });
  await until(() => server!.output().includes('open-file limit (ulimit -n)'), 2000);
  expect(server.output()).toMatch(/"maxConnections":1000000,"openFilesLimit":\d+/);
});
