import type { Socket } from 'node:net';
import type { LimitReport } from './limit-report.js';
import type { OpenConnections } from './connection-cap.js';

/** What a socket's output looked like when it was last seen moving. */
interface Progress {
  readonly written: number;
  readonly pending: number;
  readonly since: number;
}

/**
 * Closes connections whose output has not moved for `timeoutMs` (nginx's send_timeout): a client that
 * never reads. Backpressure bounds what such a client costs in memory, but its connection would be held
 * for ever. Only output waiting for the client counts (the socket's writable buffer is not empty): a slow
 * store query writes nothing, and is bounded by the store's own timeouts instead.
 */
export function enforceSendTimeout(open: OpenConnections, timeoutMs: number, report: LimitReport): { stop(): void } {
  const seen = new WeakMap<Socket, Progress>();
  const check = () => {
    const now = performance.now();
    for (const socket of open.sockets) {
      const pending = socket.writableLength;
      if (pending === 0) {
        seen.delete(socket);
        continue;
      }
      const written = socket.bytesWritten;
      const last = seen.get(socket);
      if (!last || last.written !== written || last.pending !== pending) {
        seen.set(socket, { written, pending, since: now });
      } else if (now - last.since >= timeoutMs) {
        report('send_timeout', { remoteAddress: socket.remoteAddress, pendingBytes: pending }, 'closed a connection that stopped reading its response');
        socket.destroy();
      }
    }
  };
  // A fraction of the timeout, so that a stalled connection is closed at most a quarter late.
  const timer = setInterval(check, Math.min(1000, timeoutMs / 4)).unref();
  return { stop: () => clearInterval(timer) };
}
