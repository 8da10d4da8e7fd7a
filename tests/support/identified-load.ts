import { buildUserInput } from './builders.js';

// Load whose every request carries an id of its own (X-Request-Id), so that what a stopping server logged as
// received can be checked against what its clients were answered: a drain that loses no request.

/** What the clients got: each answered request's status by id, and the ids that got no answer. */
export interface IdentifiedLoad {
  readonly answered: Map<string, number>;
  readonly failed: string[];
  /** Ends the clients' loops once their requests under way are done. */
  stop(): Promise<void>;
}

/** `clients` loops alternating `GET <readPath>` and `POST /users`, ids `load-1`, `load-2`, …, until stop(). */
export function startIdentifiedLoad(baseUrl: string, { clients, readPath }: { clients: number; readPath: string }): IdentifiedLoad {
  const answered = new Map<string, number>();
  const failed: string[] = [];
  let sequence = 0;
  let stopped = false;
  const client = async () => {
    while (!stopped) {
      const id = `load-${++sequence}`;
      const write = sequence % 2 === 0;
      try {
        const response = await fetch(`${baseUrl}${write ? '/users' : readPath}`, {
          method: write ? 'POST' : 'GET',
          headers: { 'x-request-id': id, 'content-type': 'application/json' },
          body: write ? JSON.stringify(buildUserInput()) : undefined,
        });
        await response.arrayBuffer();
        answered.set(id, response.status);
      } catch {
        // Refused or reset once the server stopped accepting: checked against what it received.
        failed.push(id);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  };
  const running = Array.from({ length: clients }, client);
  return {
    answered,
    failed,
    stop: async () => {
      stopped = true;
      await Promise.all(running);
    },
  };
}

/** A server's JSON log lines, parsed. */
export const logEntries = (output: string) =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg: string; requestId?: string; signal?: string; status?: number });

/** The load's request ids the log says were received, and the ids it says were completed. */
export function loggedRequests(output: string): { received: string[]; completed: Set<string> } {
  const entries = logEntries(output);
  return {
    received: entries.filter((entry) => entry.msg === 'request received' && entry.requestId?.startsWith('load-')).map((entry) => entry.requestId!),
    completed: new Set(entries.filter((entry) => entry.msg === 'request').map((entry) => entry.requestId!)),
  };
}
