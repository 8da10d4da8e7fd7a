import pLimit from 'p-limit';
import { HttpProblem } from '../errors/problem.js';

/** How many password-hash checks run at once, and how many may wait for a turn. */
export interface HashGateSettings {
  readonly concurrency: number;
  readonly queue: number;
}

/** Why the gate refused a check: the client had one under way already, or the queue was full. */
export type HashGateRefusal = 'hash_per_client' | 'hash_queue_full';

/**
 * Runs password-hash checks a few at a time (each costs tens of milliseconds and megabytes), so that a
 * flood of guesses cannot take every thread and starve the real user. Fair between clients: one client
 * has at most one check queued or running, and the queue is bounded; beyond either, a clear refusal at once
 * rather than a wait that grows with the attack.
 */
export function createHashGate({ concurrency, queue }: HashGateSettings, refused: (why: HashGateRefusal) => void) {
  const limit = pLimit(concurrency);
  const busy = new Set<string>();
  return async function run<T>(client: string, check: () => Promise<T>): Promise<T> {
    if (busy.has(client)) {
      refused('hash_per_client');
      throw new HttpProblem('too-many-attempts', 'A credential check from this client is already in progress; try again in 1 second.', {
        headers: { 'Retry-After': '1' },
      });
    }
    if (limit.activeCount >= concurrency && limit.pendingCount >= queue) {
      refused('hash_queue_full');
      throw new HttpProblem('credential-checks-busy', 'Too many credential checks are waiting; try again in 1 second.');
    }
    busy.add(client);
    try {
      return await limit(check);
    } finally {
      busy.delete(client);
    }
  };
}

/** The gate createHashGate builds: `run(client, check)`. */
export type HashGate = ReturnType<typeof createHashGate>;
