import type { Socket } from 'node:net';
import type { Middleware } from 'koa';
import type { LimitReport } from './limit-report.js';

/** Requests of one connection handled at once; Node sends their responses in order anyway. */
const IN_PROGRESS_PER_CONNECTION = 1;

/** The requests of one connection: how many are being handled, and the ones waiting for their turn. */
interface Line {
  active: number;
  /** No request is admitted any more: the connection closed, or had too many waiting. */
  full: boolean;
  /** Requests dropped since then. */
  dropped: number;
  readonly waiting: Array<(admitted: boolean) => void>;
}

/**
 * Outermost middleware: pipelined requests are handled one at a time per connection, and at most
 * `maxWaiting` may wait. Past that, the requests admitted are answered (the last with `Connection: close`),
 * the rest are dropped, and the connection is closed; a client that keeps sending has it closed at once
 * (pausing the socket does not stop Node's parser, and each dropped request holds memory). Node parses a whole
 * socket read (64 KiB, some 1,800 small requests) at once and starts every request in it; each response but
 * the first would be buffered in memory until its turn, and Node's own pause looks only at output already
 * buffered: one connection writing requests without reading would grow the process with each of them.
 */
export function pipelining(maxWaiting: number, report: LimitReport): Middleware {
  const lines = new WeakMap<Socket, Line>();
  function lineOf(socket: Socket): Line {
    let line = lines.get(socket);
    if (!line) {
      const created: Line = { active: 0, full: false, dropped: 0, waiting: [] };
      socket.once('close', () => {
        created.full = true;
        for (const admit of created.waiting.splice(0)) admit(false);
      });
      lines.set(socket, (line = created));
    }
    return line;
  }
  /**
   * Takes a turn, synchronously when one is free: Node starts every request of one socket read in the same
   * tick. A turn that ends is handed straight to the next waiting request, so none can be taken in between.
   */
  function admitted(line: Line, socket: Socket): boolean | Promise<boolean> {
    if (line.full) {
      if (++line.dropped > maxWaiting) socket.destroy();
      return false;
    }
    if (line.active < IN_PROGRESS_PER_CONNECTION) {
      line.active++;
      return true;
    }
    if (line.waiting.length < maxWaiting) return new Promise((resolve) => line.waiting.push(resolve));
    report(
      'pipeline_depth',
      { remoteAddress: socket.remoteAddress, waiting: line.waiting.length },
      'closing a connection with too many pipelined requests waiting',
    );
    line.full = true;
    return false;
  }
  function endTurn(line: Line, socket: Socket): void {
    const next = line.waiting.shift();
    if (next) {
      next(true);
      return;
    }
    line.active--;
    // Past the limit, the last answer admitted has gone out: the connection ends once it is flushed.
    if (line.full) socket.destroySoon();
  }
  return async (ctx, next) => {
    const { socket } = ctx.req;
    const line = lineOf(socket);
    const admission = admitted(line, socket);
    if (!(admission === true || (admission !== false && (await admission)))) {
      // Dropped: never answered, its connection closes once the requests admitted before it are.
      ctx.respond = false;
      return;
    }
    if (line.full && line.waiting.length === 0) ctx.set('Connection', 'close');
    // A streamed body is still being sent when the middleware returns: the turn ends with the response.
    ctx.res.once('close', () => endTurn(line, socket));
    await next();
  };
}
