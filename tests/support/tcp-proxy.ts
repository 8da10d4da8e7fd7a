import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * - `pass`: bytes flow both ways.
 * - `blackhole`: connections are accepted and kept open, but every byte either way is dropped: a question
 *   sent meanwhile is never answered, even after the mode is `pass` again (as when a partition outlasts the
 *   retransmissions, or a middlebox loses the connection's state without telling either end).
 * - `refuse`: new connections are refused (the port stops listening); open ones keep flowing.
 * - `answers-lost`: the client's bytes reach the server, which acts on them, but nothing it answers reaches the
 *   client (an asymmetric partition): a write sent meanwhile may be committed without its client learning so.
 */
export type ProxyMode = 'pass' | 'blackhole' | 'refuse' | 'answers-lost';

/** A fault-injecting TCP proxy in front of a real server (PostgreSQL, or an instance of the service). */
export interface TcpProxy {
  readonly port: number;
  /** The URL with its host and port replaced by the proxy's. */
  via(url: string): string;
  setMode(mode: ProxyMode): Promise<void>;
  /** Resets every open connection (RST to both sides), as a network device or a crashed peer would. */
  resetAll(): void;
  /** Connections open through the proxy now. */
  connections(): number;
  close(): Promise<void>;
}

interface Pair {
  readonly client: Socket;
  upstream?: Socket;
}

function listenOn(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Starts a proxy on a free port of 127.0.0.1 that forwards to `target`. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: ProxyMode = 'pass';
  const pairs = new Set<Pair>();
  const flowing = () => mode !== 'blackhole';
  const answering = () => mode !== 'blackhole' && mode !== 'answers-lost';

  function openUpstream(pair: Pair): void {
    const upstream = connect(target.port, target.host);
    pair.upstream = upstream;
    const drop = () => {
      pairs.delete(pair);
      pair.client.destroy();
      upstream.destroy();
    };
    pair.client.on('data', (chunk) => flowing() && upstream.write(chunk));
    upstream.on('data', (chunk) => answering() && pair.client.write(chunk));
    upstream.on('error', drop).on('close', drop);
    pair.client.on('close', drop);
  }

  const server = createServer((client) => {
    const pair: Pair = { client };
    pairs.add(pair);
    client.on('error', () => client.destroy());
    client.on('close', () => {
      if (!pair.upstream) pairs.delete(pair);
    });
    // In a blackhole the peer is never reached: the client's bytes go nowhere until it gives up.
    if (flowing()) openUpstream(pair);
  });
  const port = await listenOn(server, 0);

  return {
    port,
    via(url) {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    async setMode(next) {
      const was = mode;
      mode = next;
      if (was === 'refuse' && next !== 'refuse') await listenOn(server, port);
      if (next === 'refuse' && was !== 'refuse') server.close();
    },
    resetAll() {
      for (const pair of pairs) {
        pair.client.resetAndDestroy();
        pair.upstream?.resetAndDestroy();
      }
      pairs.clear();
    },
    connections: () => pairs.size,
    async close() {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream?.destroy();
      }
      pairs.clear();
      if (server.listening) await new Promise((resolve) => server.close(resolve));
    },
  };
}
