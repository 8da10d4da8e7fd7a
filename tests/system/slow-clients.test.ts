import { connect, type Socket } from 'node:net';
import { httpClient } from '../support/http-client.js';
import { useTestServer, withTestServer } from '../support/test-server.js';

// Slowloris: 500 sockets that send their headers a line at a time and never finish. Normal requests must
// still be answered, and the server must close the slow sockets once HEADERS_TIMEOUT_MS has passed.

const SLOW_SOCKETS = 500;
const sut = useTestServer({ env: { HEADERS_TIMEOUT_MS: '2000', REQUEST_TIMEOUT_MS: '5000' } });

interface SlowSocket {
  readonly socket: Socket;
  received: string;
  closed: boolean;
}

function openSlow(port: number): Promise<SlowSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const slow: SlowSocket = { socket, received: '', closed: false };
    socket.on('data', (chunk) => (slow.received += chunk.toString()));
    socket.on('close', () => (slow.closed = true));
    socket.on('error', () => undefined);
    socket.once('connect', () => {
      socket.write('GET /users HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      resolve(slow);
    });
    socket.once('error', reject);
  });
}

test('500 slow sockets neither starve normal requests nor stay open past the headers timeout', async () => {
  const slow = await Promise.all(Array.from({ length: SLOW_SOCKETS }, () => openSlow(sut.server.port)));
  let line = 0;
  const drip = setInterval(() => {
    line++;
    for (const { socket, closed } of slow) if (!closed) socket.write(`X-Drip-${line}: ${line}\r\n`);
  }, 250);
  try {
    const api = httpClient(sut.server.url);
    for (let i = 0; i < 20; i++) {
      const started = performance.now();
      expect((await api.get('/users/1')).status).toBe(200);
      expect(performance.now() - started).toBeLessThan(1000);
    }
    const deadline = Date.now() + 6000;
    while (slow.some((s) => !s.closed) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(slow.filter((s) => !s.closed)).toHaveLength(0);
    // They were told why, as problem+json.
    const answered = slow.filter((s) => s.received.startsWith('HTTP/1.1 408'));
    expect(answered.length).toBeGreaterThan(SLOW_SOCKETS * 0.9);
    expect(answered[0]!.received).toContain('Content-Type: application/problem+json');
    expect((await api.get('/users/1')).status).toBe(200);
  } finally {
    clearInterval(drip);
    for (const { socket } of slow) socket.destroy();
  }
}, 30_000);

test('a keep-alive connection is closed after MAX_REQUESTS_PER_SOCKET requests', () =>
  withTestServer({ env: { MAX_REQUESTS_PER_SOCKET: '10' } }, async (server) => {
    const socket = connect(server.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n'.repeat(12));
    await closed;
    // The tenth answer tells the client to go, and the connection closes; what was sent past it is dropped.
    expect(received.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(10);
    expect(received.match(/^Connection: close$/gim)).toHaveLength(1);
    expect(received).not.toMatch(/HTTP\/1\.1 5\d\d/);
  }));
