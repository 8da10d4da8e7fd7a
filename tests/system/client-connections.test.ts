import { buildUserInput } from '../support/builders.js';
import { reader, until, type Held } from '../support/raw-connections.js';
import { childrenOf, startServerProcess, type ServerProcess } from '../support/server-process.js';
import { createTestStore, postgresAvailable, type TestStore } from '../support/test-store.js';

// MAX_CONNECTIONS_PER_CLIENT must stop a client that holds connections it does not use for anything but
// holding them, and never an ordinary HTTP client, which keeps idle sockets open to reuse them.

let store: TestStore | undefined;
let server: ServerProcess | undefined;
const held: Held[] = [];
afterEach(async () => {
  for (const { socket } of held.splice(0)) socket.destroy();
  await server?.stop();
  server = undefined;
  await store?.drop();
  store = undefined;
});

/** Creates through Node's fetch in the first test: enough for its pool to open more sockets than it has requests in flight. */
const CREATES = 1000;
/** Lets connections whose request head never finishes stay open for the whole of a test. */
const LONG_HEADS = { HEADERS_TIMEOUT_MS: '60000', REQUEST_TIMEOUT_MS: '60000' };
const healthz = 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n';
const answered = (connection: Held) => connection.received.includes('"status":"ok"') || connection.received.startsWith('HTTP/1.1 503');

// Issue 24, item 6: Node's fetch with 64 requests in flight opened up to 100 sockets, and 8-13 of 200 creates
// got 503 too-many-connections on PostgreSQL, while most of those sockets sat idle.
(postgresAvailable ? test : test.skip)(
  "Node's fetch with 64 creates in flight is never refused by the default cap of 100 connections",
  async () => {
    store = await createTestStore('postgres');
    server = await startServerProcess(store, { LOG_LEVEL: 'info', MAX_CONNECTIONS_PER_CLIENT: '100' });
    const url = `${server.url}/users`;
    const authorization = `Basic ${Buffer.from('tester:correct horse battery staple').toString('base64')}`;
    const statuses = new Map<number, number>();
    let next = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next++ < CREATES) {
          const response = await fetch(url, {
            method: 'POST',
            headers: { authorization, 'content-type': 'application/json' },
            body: JSON.stringify(buildUserInput()),
          });
          await response.arrayBuffer();
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        }
      }),
    );
    console.log(`${CREATES} creates, 64 in flight, through Node's fetch: ${JSON.stringify([...statuses])}`);
    expect([...statuses]).toEqual([[201, CREATES]]);
  },
  60_000,
);

test("at the cap, a client's idle keep-alive connections give their places to its new ones; busy ones are never closed", async () => {
  store = await createTestStore('sqlite');
  server = await startServerProcess(store, { LOG_LEVEL: 'info', KEEP_ALIVE_TIMEOUT_MS: '60000', MAX_CONNECTIONS_PER_CLIENT: '10', ...LONG_HEADS });
  const { url } = server;
  // Five connections answered and idle, five with a request under way (its head not yet complete).
  const idle = await Promise.all(Array.from({ length: 5 }, () => reader(url, healthz, '127.0.0.2')));
  await until(() => idle.every(answered), 5000);
  const busy = await Promise.all(Array.from({ length: 5 }, () => reader(url, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n', '127.0.0.2')));
  held.push(...idle, ...busy);
  await until(() => false, 300);
  // Five more: each takes the place of an idle one, which is closed after its next answer (not under a request
  // the client may be sending on it that very moment).
  const newcomers = await Promise.all(Array.from({ length: 5 }, () => reader(url, healthz, '127.0.0.2')));
  held.push(...newcomers);
  await until(() => newcomers.every(answered), 5000);
  expect(newcomers.map((connection) => connection.received.slice(0, 15))).toEqual(newcomers.map(() => 'HTTP/1.1 200 OK'));
  for (const connection of idle) {
    connection.received = '';
    connection.socket.write(healthz);
  }
  await until(() => idle.every((connection) => connection.closed), 5000);
  expect(idle.every((connection) => /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\nConnection: close\r\n/.test(connection.received))).toBe(true);
  // The busy ones were never touched: their requests complete and they stay open.
  for (const connection of busy) connection.socket.write('\r\n');
  await until(() => busy.every(answered), 5000);
  expect(busy.every((connection) => connection.received.startsWith('HTTP/1.1 200') && !connection.closed)).toBe(true);
}, 30_000);

test('at the cap with every connection busy, a new one is refused with 503, and the busy ones are served', async () => {
  store = await createTestStore('sqlite');
  server = await startServerProcess(store, { LOG_LEVEL: 'info', KEEP_ALIVE_TIMEOUT_MS: '60000', MAX_CONNECTIONS_PER_CLIENT: '10', ...LONG_HEADS });
  const { url } = server;
  const busy = await Promise.all(Array.from({ length: 10 }, () => reader(url, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n', '127.0.0.2')));
  held.push(...busy);
  await until(() => false, 300);
  const refused = await reader(url, healthz, '127.0.0.2');
  const other = await reader(url, healthz, '127.0.0.3');
  held.push(refused, other);
  await until(() => answered(refused) && answered(other), 5000);
  expect(refused.received).toMatch(/^HTTP\/1\.1 503 /);
  expect(refused.received).toContain('"type":"urn:user-records:problem:too-many-connections"');
  expect(other.received).toMatch(/^HTTP\/1\.1 200 /);
  for (const connection of busy) connection.socket.write('\r\n');
  await until(() => busy.every(answered), 5000);
  expect(busy.every((connection) => connection.received.startsWith('HTTP/1.1 200'))).toBe(true);
  expect(server.output()).toContain('refused a connection: the client holds MAX_CONNECTIONS_PER_CLIENT, none of them idle');
}, 30_000);

/** Opens `count` connections from `from`, each with a request under way (its head never finished); resolves once each is held or refused. */
async function busyConnections(url: string, count: number, from: string): Promise<Held[]> {
  const connections = await Promise.all(Array.from({ length: count }, () => reader(url, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n', from)));
  held.push(...connections);
  await until(() => false, 500);
  await until(() => connections.every((connection) => !connection.closed || connection.received.startsWith('HTTP/1.1 503')), 5000);
  return connections;
}

// Issue 24, item 6: the cap was per worker; with WORKERS=2 and a cap of 100 one client held 190 connections.
test('with WORKERS=2 the cap holds for the process group, and the places of a worker that dies are given back', async () => {
  store = await createTestStore('sqlite');
  // Heads that never finish are held past the whole test (HEADERS_TIMEOUT_MS would close them after 10 s).
  server = await startServerProcess(store, { LOG_LEVEL: 'info', WORKERS: '2', MAX_CONNECTIONS_PER_CLIENT: '20', ...LONG_HEADS });
  const first = await busyConnections(server.url, 30, '127.0.0.2');
  const open = () => held.filter((connection) => !connection.closed).length;
  console.log(
    `30 busy connections from one client, WORKERS=2, cap 20: ${open()} held, ${first.filter((c) => c.received.startsWith('HTTP/1.1 503')).length} refused`,
  );
  expect(open()).toBe(20);
  expect(first.filter((connection) => connection.received.startsWith('HTTP/1.1 503'))).toHaveLength(10);
  // A worker killed takes its connections with it; the primary starts another and forgets its places.
  const [worker] = childrenOf(server.pid);
  process.kill(worker!, 'SIGKILL');
  await until(() => server!.output().split('user records service listening').length > 3, 10_000);
  await until(() => open() < 20, 5000);
  await until(() => false, 500); // the rest of its connections close meanwhile
  const survivors = open();
  await busyConnections(server.url, 30, '127.0.0.2');
  console.log(`after a worker died: ${survivors} survived, ${open()} held after 30 more`);
  expect(survivors).toBeLessThan(20);
  expect(open()).toBe(20);
}, 60_000);
