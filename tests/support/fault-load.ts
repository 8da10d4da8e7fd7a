import { performance } from 'node:perf_hooks';
import { buildUserInput } from './builders.js';

/** One request of a load run: its status (0: no answer at all, or none within the hang bound) and duration. */
export interface Answer {
  /** A create, not a read. */
  readonly write: boolean;
  readonly status: number;
  readonly ms: number;
  readonly problem: boolean;
  readonly at: number;
}

/** A small concurrent load of reads and writes, and a liveness probe on /healthz, until `stop()`. */
export interface FaultLoad {
  readonly answers: Answer[];
  /** The slowest /healthz answer seen (Infinity if one failed). */
  readonly slowestHealthMs: () => number;
  stop(): Promise<void>;
}

async function timed(url: string, init: RequestInit & { method?: 'POST' }, hangMs: number): Promise<Answer> {
  const started = performance.now();
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(hangMs) });
    await response.arrayBuffer();
    const problem = response.headers.get('content-type') === 'application/problem+json';
    return { write: init.method === 'POST', status: response.status, ms: performance.now() - started, problem, at: started };
  } catch {
    return { write: init.method === 'POST', status: 0, ms: performance.now() - started, problem: false, at: started };
  }
}

const write = () => ({ method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: JSON.stringify(buildUserInput()) });

/** Starts `clients` loops alternating `GET /users/1` and `POST /users`; a request taking `hangMs` counts as a hang. */
export function startFaultLoad(baseUrl: string, clients: number, hangMs: number): FaultLoad {
  const answers: Answer[] = [];
  let running = true;
  let slowestHealth = 0;
  const loop = async (index: number) => {
    for (let turn = index; running; turn++) {
      const init = turn % 2 === 0 ? {} : write();
      answers.push(await timed(`${baseUrl}${turn % 2 === 0 ? '/users/1' : '/users'}`, init, hangMs));
    }
  };
  const probe = async () => {
    while (running) {
      const answer = await timed(`${baseUrl}/healthz`, {}, 5000);
      slowestHealth = Math.max(slowestHealth, answer.status === 200 ? answer.ms : Infinity);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const loops = [...Array.from({ length: clients }, (_, index) => loop(index)), probe()];
  return {
    answers,
    slowestHealthMs: () => slowestHealth,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Reads one counter's value (summed over its series) from a Prometheus text page. */
export async function counterValue(baseUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  return [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)`, 'gm'))].reduce((sum, match) => sum + Number(match[1]), 0);
}

/** Polls until GET and POST both succeed again, without any restart; resolves with how long that took. */
export async function recovered(baseUrl: string, withinMs: number): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < withinMs) {
    const read = await timed(`${baseUrl}/users/1`, {}, 5000);
    const created = await timed(`${baseUrl}/users`, write(), 5000);
    if (read.status === 200 && created.status === 201) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the service did not answer 200/201 again within ${withinMs} ms of the fault ending`);
}
