import { HttpProblem } from '../errors/problem.js';
import { addressBlock } from '../limits/client-address.js';
import { createLastServed } from './last-served.js';

/** How many password-hash checks run at once, and how many may wait for a turn. */
export interface HashGateSettings {
  readonly concurrency: number;
  readonly queue: number;
}

/** Why the gate refused a check: the client had one under way already, or the queue was full. */
export type HashGateRefusal = 'hash_per_client' | 'hash_queue_full';

/** Address blocks whose last turn is remembered: about 5 MB at most, more blocks than 10,000 attacking addresses hold. */
const SERVED_REMEMBERED = 32_768;

/** A check waiting for its turn. */
interface Waiting {
  readonly admit: () => void;
  readonly evict: (problem: HttpProblem) => void;
}

const queueFull = () => new HttpProblem('credential-checks-busy', 'Too many credential checks are waiting; try again in 1 second.');

/**
 * The checks waiting, by address block, served round-robin: each block in turn gives its longest-waiting check,
 * so that a newcomer waits for at most one check of each other block, however many one block queued.
 */
function createTurns() {
  const blocks = new Map<string, Waiting[]>();
  let size = 0;
  /** Takes the longest-waiting check of `block`; the block goes to the back of the round if it has more. */
  function take(block: string): Waiting {
    const queued = blocks.get(block)!;
    const first = queued.shift()!;
    blocks.delete(block);
    if (queued.length > 0) blocks.set(block, queued);
    size--;
    return first;
  }
  return {
    size: () => size,
    blocks: () => blocks.keys(),
    add(block: string, waiting: Waiting): void {
      // A block already waiting keeps its place in the round.
      const queued = blocks.get(block);
      if (queued === undefined) blocks.set(block, [waiting]);
      else queued.push(waiting);
      size++;
    },
    /** The check whose turn it is, if any waits. */
    next: (): Waiting | undefined => (size === 0 ? undefined : take(blocks.keys().next().value!)),
    take,
  };
}

/**
 * Runs password-hash checks a few at a time (each costs tens of milliseconds and megabytes), so that a
 * flood of guesses cannot take every thread. Fair between clients, so that a flood from many addresses cannot
 * lock out one that is not flooding: one address has at most one check queued or running; the waiting checks
 * are served round-robin by address block (IPv4 /24, IPv6 /64); and when the queue is full, a newcomer whose
 * block had its last turn longer ago than some waiting block's takes the place of the longest-waiting check of
 * the block served most recently (refused instead), where a first-come queue would refuse the newcomer. Attacking
 * addresses each sending one guess at a time look like the real user, but each is back for a turn as soon as it
 * had one: turns had, not checks queued, tell them apart, and each block gets its share of the turns. Every
 * refusal is at once, before any check runs, so the login throttle gives the attempt's point back.
 */
export function createHashGate({ concurrency, queue }: HashGateSettings, refused: (why: HashGateRefusal) => void) {
  const busy = new Set<string>();
  const waiting = createTurns();
  const lastServed = createLastServed(SERVED_REMEMBERED);
  let running = 0;

  /** The waiting block served most recently: the first to give up its place. */
  function servedLatest(): string | undefined {
    let chosen: string | undefined;
    for (const block of waiting.blocks()) if (chosen === undefined || lastServed.at(block) > lastServed.at(chosen)) chosen = block;
    return chosen;
  }

  /** Resolves when the check may run; rejects with the 503 problem when the queue has no place for it, or it loses its place. */
  async function turn(block: string): Promise<void> {
    if (running < concurrency) running++;
    else {
      if (waiting.size() >= queue) {
        const loser = servedLatest();
        // Equals (blocks never served, as an attack's first guesses and the real user's) keep their places: a swap would only trade one refusal for another.
        if (loser === undefined || lastServed.at(loser) <= lastServed.at(block)) throw queueFull();
        waiting.take(loser).evict(queueFull());
      }
      await new Promise<void>((admit, evict) => waiting.add(block, { admit, evict }));
    }
    lastServed.serve(block);
  }

  /** Hands the slot of a finished check to the next waiting one, or frees it. */
  function release(): void {
    const next = waiting.next();
    if (next === undefined) running--;
    else next.admit();
  }

  return async function run<T>(client: string, check: () => Promise<T>): Promise<T> {
    const block = addressBlock(client);
    if (busy.has(client)) {
      refused('hash_per_client');
      throw new HttpProblem('too-many-attempts', 'A credential check from this client is already in progress; try again in 1 second.', {
        headers: { 'Retry-After': '1' },
      });
    }
    busy.add(client);
    try {
      await turn(block).catch((problem: unknown) => {
        refused('hash_queue_full');
        throw problem;
      });
      try {
        return await check();
      } finally {
        release();
      }
    } finally {
      busy.delete(client);
    }
  };
}

/** The gate createHashGate builds: `run(client, check)`. */
export type HashGate = ReturnType<typeof createHashGate>;
