// Ports for the processes tests start.
import { createServer } from 'node:net';

/** A port that was free a moment ago, for a process that cannot listen on port 0 and report the port it got. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
