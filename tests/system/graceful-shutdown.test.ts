import { connect } from 'node:net';
import { loggedRequests, startIdentifiedLoad } from '../support/identified-load.js';
import { startServerProcess } from '../support/server-process.js';
import { createTestStore, type TestStore } from '../support/test-store.js';

// SIGTERM under steady load: every request the server had received is answered, then it exits 0.

let store: TestStore;
beforeEach(async () => {
  store = await createTestStore('sqlite');
});
afterEach(() => store.drop());

test('SIGTERM during steady load fails no request that was in flight, and exits 0', async () => {
  const server = await startServerProcess(store, { SHUTDOWN_TIMEOUT_MS: '5000' });
  const load = startIdentifiedLoad(server.url, { clients: 20, readPath: '/users/1' });
  await new Promise((resolve) => setTimeout(resolve, 800));
  const exit = server.stop('SIGTERM');
  expect(await exit).toBe(0);
  await load.stop();

  const { received: ids, completed } = loggedRequests(server.output());
  const received = new Set(ids);
  expect(received.size).toBeGreaterThan(50);
  // In flight = received by the server. Each of those was completed, and its client got the answer.
  const lost = [...received].filter((id) => !completed.has(id) || !load.answered.has(id));
  expect(lost).toEqual([]);
  expect([...load.answered.values()].every((status) => status === 200 || status === 201)).toBe(true);
  expect(load.failed.filter((id) => received.has(id))).toEqual([]);
}, 60_000);

test('a request still in flight at the deadline is cut, and the process exits 0 on time', async () => {
  const server = await startServerProcess(store, { SHUTDOWN_TIMEOUT_MS: '1000' });
  const port = Number(new URL(server.url).port);
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.on('error', () => undefined);
  // A body that never finishes arriving.
  socket.write('POST /users HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"first');
  await new Promise((resolve) => setTimeout(resolve, 200));
  const started = Date.now();
  expect(await server.stop('SIGTERM')).toBe(0);
  expect(Date.now() - started).toBeLessThan(4000);
  expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  socket.destroy();
}, 30_000);
