import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { normaliseAddress } from './client-address.js';
import type { Places } from './connection-places.js';

/** What a connection is doing: requests under way, and where its input stood when the last one ended. */
interface Use {
  inFlight: number;
  /** socket.bytesRead when its last response ended; undefined until one has (a new connection is never idle). */
  readAtRest: number | undefined;
  restSince: number;
}

/**
 * An idle keep-alive connection: it has been answered, nothing is under way, and no byte of a next request has
 * arrived (bytesRead counts what the kernel handed over, even to Node's native parser, which JS never sees).
 */
const idle = (socket: Socket, use: Use) => use.inFlight === 0 && use.readAtRest === socket.bytesRead;

/** One client's connections, and those of them told to close. */
interface Held {
  readonly sockets: Set<Socket>;
  readonly closing: Set<Socket>;
}

/**
 * The connections of each client (its normalised address, IPv6 per /64), and which of them are idle, for
 * MAX_CONNECTIONS_PER_CLIENT. An HTTP client keeps sockets open for reuse (Node's fetch opens more than it has
 * requests in flight), and counting those against it would refuse its new connections while most of its own sit
 * idle: only connections all busy are a reason to refuse. So at the cap, the client's connection idle longest
 * is told to close, and the new one takes its place. Closing it there and then would race the client, which may be
 * sending its next request on it that very moment (Node's fetch fails a create with "other side closed"): it is
 * closed instead after its next answer (`Connection: close`), or by the keep-alive timeout if none comes. Until
 * then it counts in this process, up to twice the cap, so that a client cannot grow its share by leaving connections
 * idle; its place in `places` (shared by the workers, see connection-places.ts) is the new connection's.
 * Why the service counts connections itself, and the measurements: docs/decisions/connection-limits-in-process.md.
 */
export function clientConnections(http: Server, perClient: number, places: Places) {
  const held = new Map<string, Held>();
  const uses = new WeakMap<Socket, Use>();
  const closing = new WeakSet<Socket>();
  http.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const use = uses.get(req.socket);
    if (use === undefined) return;
    if (closing.has(req.socket)) res.shouldKeepAlive = false;
    use.inFlight++;
    res.once('close', () => {
      if (--use.inFlight > 0) return;
      use.readAtRest = req.socket.bytesRead;
      use.restSince = performance.now();
    });
  });

  /** Tells the client's connection idle longest to close; false when none is idle. */
  function reclaim({ sockets, closing: told }: Held): boolean {
    let oldest: Socket | undefined;
    for (const socket of sockets) {
      const use = uses.get(socket)!;
      if (!told.has(socket) && idle(socket, use) && (oldest === undefined || use.restSince < uses.get(oldest)!.restSince)) oldest = socket;
    }
    if (oldest === undefined) return false;
    told.add(oldest);
    closing.add(oldest);
    return true;
  }

  /** The client's connections in this process; created for a connection that is to be counted. */
  const of = (key: string): Held => held.get(key) ?? { sockets: new Set<Socket>(), closing: new Set<Socket>() };

  /** Counts an admitted socket in its client's connections, until it closes (and gives its place back if it has one). */
  function count(key: string, client: Held, socket: Socket): void {
    held.set(key, client);
    client.sockets.add(socket);
    uses.set(socket, { inFlight: 0, readAtRest: undefined, restSince: 0 });
    socket.once('close', () => {
      client.sockets.delete(socket);
      if (!client.closing.delete(socket)) places.give(key);
      if (client.sockets.size === 0 && held.get(key) === client) held.delete(key);
    });
  }

  return {
    /** Takes a place for the socket; false when its client holds `perClient` connections, none of them idle here. */
    async admit(socket: Socket): Promise<boolean> {
      if (perClient === 0) return true;
      const key = normaliseAddress(socket.remoteAddress ?? '') ?? 'unknown';
      const took = await places.take(key);
      if (socket.destroyed) {
        // Gone while its place was asked for: the place goes back.
        if (took) places.give(key);
        return false;
      }
      const client = of(key);
      if (!took && !(client.sockets.size < 2 * perClient && reclaim(client))) return false;
      count(key, client, socket);
      return true;
    },
  };
}
