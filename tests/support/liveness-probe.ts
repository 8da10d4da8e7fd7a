import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { request } from 'node:http';

// What an attack costs the server, measured from outside: how long a health check waits, how large the process grows.

/**
 * The longest a health check may wait while an attack runs. Generous on purpose: alone on this machine the
 * slowest check takes 20-80 ms, and in a busy CI run it was once 508 ms (a bound of 500 failed there). Every
 * attack the tests make stalled the server before its fix for far longer: four full lists of 250,000 users
 * 2.8-3.0 s, a sweep of 1,000,000 keys 7 s, pipelined lists 9 s, hostile patterns several seconds.
 */
export const STALL_BOUND_MS = 1500;

/** One GET, on a connection of its own; resolves with the status and the milliseconds it took. */
export function timedGet(url: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false }, (res) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
    });
    req.once('error', reject);
    // Only a bound on a hang: on a busy machine a search of 250,000 users can take tens of seconds.
    req.setTimeout(120_000, () => req.destroy(new Error(`no answer from ${url} in 120 s`)));
    req.end();
  });
}

const refused = (error: unknown) => (error as NodeJS.ErrnoException).code === 'ECONNREFUSED';

/**
 * Polls `url` every `everyMs` until stopped; `stop` resolves with the slowest answer and the statuses seen.
 * `beforeListening`: started before the server, it waits for it to listen (refused connections are not
 * counted), so that it also sees work the server does as it starts.
 */
export function startProbe(url: string, everyMs = 50, { beforeListening = false } = {}): { stop(): Promise<{ slowestMs: number; statuses: number[] }> } {
  let running = true;
  let slowestMs = 0;
  const statuses: number[] = [];
  const loop = (async () => {
    while (running) {
      const answer = await timedGet(url).catch((error: unknown) => {
        if (beforeListening && statuses.length === 0 && refused(error)) return undefined;
        throw error;
      });
      if (!answer) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        continue;
      }
      const { status, ms } = answer;
      statuses.push(status);
      slowestMs = Math.max(slowestMs, ms);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { slowestMs, statuses };
    },
  };
}

/** Resident memory of a process, in MiB (Linux). */
export function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m);
  return Number(line![1]) / 1024;
}

/** Sockets the server process holds open, listening one included (Linux). */
export function openSockets(pid: number): number {
  const isSocket = (fd: string) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:');
    } catch {
      return false;
    }
  };
  return readdirSync(`/proc/${pid}/fd`).filter(isSocket).length;
}
