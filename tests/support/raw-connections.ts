import { connect, type Socket } from 'node:net';

// Plain TCP clients for hostile-client tests: ones that read nothing, and ones that keep what they read.

/** A raw connection, and what became of it. */
export interface Held {
  readonly socket: Socket;
  received: string;
  closed: boolean;
}

/** Connects (from `localAddress`, e.g. 127.0.0.2, to be another client) and sends `bytes`, if any; `closed` turns true once the socket closes. */
export function open(url: string, bytes?: string, localAddress?: string): Promise<Held> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ port: Number(port), host: hostname, ...(localAddress ? { localAddress } : {}) });
    const held: Held = { socket, received: '', closed: false };
    socket.once('close', () => (held.closed = true));
    socket.once('connect', () => {
      socket.off('error', reject);
      socket.on('error', () => undefined);
      if (bytes !== undefined) socket.write(bytes);
      resolve(held);
    });
    socket.once('error', reject);
  });
}

/** Reads nothing: the socket stays paused, so its receive window fills up. */
export const nonReader = (url: string, bytes: string) =>
  open(url, bytes).then((held) => {
    held.socket.pause();
    return held;
  });
/** Keeps everything it receives, as text. */
export const reader = (url: string, bytes?: string, localAddress?: string) =>
  open(url, bytes, localAddress).then((held) => {
    held.socket.on('data', (chunk: Buffer) => {
      held.received += chunk.toString();
    });
    return held;
  });

/** Waits until `condition` holds, or `ms` have passed. */
export async function until(condition: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
}
