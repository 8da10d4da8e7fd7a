import cluster, { type Worker } from 'node:cluster';

// MAX_CONNECTIONS_PER_CLIENT holds for the process group, not per worker: counted by each worker alone, one
// client could hold the cap in every worker. The cluster primary counts each client's places by worker (as it counts the
// rate limits, limiter-store.ts): a worker takes a place before serving a connection and gives it back when the
// connection closes. Counting there, rather than having the primary hand out connections, keeps Node's own
// distribution of connections and its idle checks in the worker that holds the socket.

/** Places of connections per client: one is taken before a connection is served and given back when it ends. */
export interface Places {
  take(client: string): Promise<boolean>;
  give(client: string): void;
}

/** How long a worker waits for the primary; past it, the connection is served: a primary too busy to answer must not stop the service. */
const ASK_TIMEOUT_MS = 1000;

type Message =
  | { type: 'user-records:places:take'; id: number; client: string }
  | { type: 'user-records:places:taken'; id: number; granted: boolean }
  | { type: 'user-records:places:give'; client: string };

const isMessage = (message: unknown): message is Message =>
  typeof message === 'object' && message !== null && String((message as { type?: unknown }).type).startsWith('user-records:places:');

/** Counts of places per client, per holder (a worker's id, or 0 for this process). */
function createLedger(cap: number) {
  const held = new Map<string, Map<number, number>>();
  const total = (client: string) => [...(held.get(client)?.values() ?? [])].reduce((sum, count) => sum + count, 0);
  return {
    take(client: string, holder: number): boolean {
      if (total(client) >= cap) return false;
      const byHolder = held.get(client) ?? new Map<number, number>();
      held.set(client, byHolder.set(holder, (byHolder.get(holder) ?? 0) + 1));
      return true;
    },
    give(client: string, holder: number): void {
      const byHolder = held.get(client);
      const left = (byHolder?.get(holder) ?? 0) - 1;
      if (left > 0) byHolder!.set(holder, left);
      else byHolder?.delete(holder);
      if (byHolder?.size === 0) held.delete(client);
    },
    /** Forgets every place a holder had: a worker that died took its connections with it. */
    drop(holder: number): void {
      for (const [client, byHolder] of held) if (byHolder.delete(holder) && byHolder.size === 0) held.delete(client);
    },
  };
}

/** The places of one process serving alone. */
export function localPlaces(cap: number): Places {
  const ledger = createLedger(cap);
  return { take: async (client) => ledger.take(client, 0), give: (client) => ledger.give(client, 0) };
}

/** Runs in the cluster primary: holds every worker's places, and drops a worker's when it exits, so that no count leaks. */
export function serveClusterPlaces(cap: number): void {
  if (cap === 0) return;
  const ledger = createLedger(cap);
  cluster.on('exit', (worker) => ledger.drop(worker.id));
  cluster.on('message', (worker: Worker, message: unknown) => {
    if (!isMessage(message)) return;
    if (message.type === 'user-records:places:give') ledger.give(message.client, worker.id);
    if (message.type !== 'user-records:places:take' || !worker.isConnected()) return;
    worker.send({ type: 'user-records:places:taken', id: message.id, granted: ledger.take(message.client, worker.id) } satisfies Message);
  });
}

/** In a worker: asks the primary for places. */
export function clusterPlaces(): Places {
  const waiting = new Map<number, (granted: boolean) => void>();
  let next = 0;
  process.on('message', (message: unknown) => {
    if (isMessage(message) && message.type === 'user-records:places:taken') waiting.get(message.id)?.(message.granted);
  });
  const send = (message: Message) => process.connected && process.send?.(message);
  return {
    take: (client) =>
      new Promise((resolve) => {
        const id = next++;
        const timer = setTimeout(() => answer(true), ASK_TIMEOUT_MS);
        const answer = (granted: boolean) => {
          clearTimeout(timer);
          waiting.delete(id);
          resolve(granted);
        };
        waiting.set(id, answer);
        send({ type: 'user-records:places:take', id, client });
      }),
    give: (client) => void send({ type: 'user-records:places:give', client }),
  };
}
