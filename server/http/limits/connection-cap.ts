import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { refuseConnection } from '../protocol/raw-answers.js';
import { clientConnections } from './client-connections.js';
import type { Places } from './connection-places.js';
import type { LimitReport } from './limit-report.js';

/** How long a refused client may take to read its 503 before the socket is destroyed. */
const REFUSAL_LINGER_MS = 2000;
/** Refused sockets left to linger at once; past this, a refusal is a reset, so that a flood of connects cannot use up file descriptors. */
const MAX_LINGERING = 100;

/** The connections a server holds. */
export interface OpenConnections {
  /** Every connection accepted and not yet closed. */
  readonly sockets: ReadonlySet<Socket>;
}

/**
 * The caps: connections in all (this process), and per client (0: none, as behind proxies, where every socket is
 * the proxy's), counted in `places` for the whole process group.
 */
export interface ConnectionCaps {
  readonly max: number;
  readonly perClient: number;
  readonly places: Places;
}

/** Answers a connection past a cap, then lets it go, whatever the client does. */
function refuse(socket: Socket, lingering: Set<Socket>, detail: string): void {
  socket.on('error', () => undefined);
  if (lingering.size >= MAX_LINGERING) {
    socket.destroy();
    return;
  }
  lingering.add(socket);
  socket.once('close', () => lingering.delete(socket));
  refuseConnection(socket, detail);
  // Reading what the client sent lets the kernel close with a FIN, not a reset that could lose the answer.
  socket.resume();
  setTimeout(() => socket.destroy(), REFUSAL_LINGER_MS).unref();
}

/**
 * Caps the connections the server holds at `max`, and those of one client at `perClient` (closing an idle one of
 * its own first, see client-connections.ts): past either, a new connection is answered with a 503 problem (Retry-After, Connection: close) and closed, rather than
 * served or silently reset (what net.Server's maxConnections does). Node's HTTP handling is given only the
 * connections within the caps; its 'connection' listener is wrapped, as the one place where a socket can be
 * turned away before it has a parser.
 */
export function capConnections(http: Server, caps: ConnectionCaps, report: LimitReport, counted: (open: number) => void): OpenConnections {
  const accept = http.listeners('connection');
  if (accept.length !== 1) throw new Error(`expected Node's one 'connection' listener, found ${accept.length}`);
  const [serve] = accept as Array<(socket: Socket) => void>;
  http.removeListener('connection', serve!);
  const sockets = new Set<Socket>();
  const lingering = new Set<Socket>();
  const perClient = clientConnections(http, caps.perClient, caps.places);
  const ignore = () => undefined;
  http.on('connection', (socket: Socket) => {
    if (sockets.size >= caps.max) {
      report('max_connections', { remoteAddress: socket.remoteAddress, open: sockets.size }, 'refused a connection: MAX_CONNECTIONS are open');
      return refuse(socket, lingering, 'The server holds as many connections as it may; retry later.');
    }
    // Counted from now, while its client's place is asked for (of the cluster primary, with WORKERS): a burst
    // of connections must not all pass the check above meanwhile.
    sockets.add(socket);
    counted(sockets.size);
    socket.once('close', () => {
      sockets.delete(socket);
      counted(sockets.size);
    });
    // Until Node's HTTP handling has it, a reset must not be an unhandled 'error'; bytes the client sends meanwhile
    // wait in the socket's buffer and reach the parser once it is served.
    socket.on('error', ignore);
    void perClient.admit(socket).then((admit) => {
      if (admit) {
        if (socket.destroyed) return;
        socket.off('error', ignore);
        serve!.call(http, socket);
        return;
      }
      if (socket.destroyed) return;
      // A refusal lingers on its own count (at most 100 of them), not on the connections served.
      sockets.delete(socket);
      counted(sockets.size);
      report(
        'max_connections_per_client',
        { remoteAddress: socket.remoteAddress },
        'refused a connection: the client holds MAX_CONNECTIONS_PER_CLIENT, none of them idle',
      );
      refuse(socket, lingering, 'This client holds as many connections as it may; close one, or retry later.');
    });
  });
  return { sockets };
}
