import cluster, { type Worker as ClusterWorker } from 'node:cluster';
import { Worker as Thread } from 'node:worker_threads';
import type { DatabaseConfig, StoreTimeouts } from '../config.js';
import { IdempotencyKeyInFlightError, StoreUnavailableError } from '../domain/errors.js';
import type { UserRepository } from '../domain/user-repository.js';
import type { Logger } from '../logger.js';

// SQLite has one write lock per file. With WORKERS, each worker committing on its own made them queue for it
// (SQLite's busy wait sleeps and polls, holding the waiting worker's event loop): on 16 cores, creates fell from
// 19.9k req/s at WORKERS=4 to 13.3k with p99 805 ms at WORKERS=8. So the store has one writer: workers read
// through their own connections (WAL readers never wait for the writer) and send each write to the primary as
// a message naming a repository operation and its arguments, all data. The primary hands it to its writer
// thread (writer-thread.ts), whose group commit (group-commit.ts) carries the writes of every worker in one
// commit. A thread, not the primary's own loop: that loop hands new connections to the workers, and a wait
// for the lock (held by a backup, say) must not stop it.

/** The repository's operations that write, and `ping`, whose answer includes the writer's recent outages. */
export const WRITES = ['create', 'replace', 'patch', 'delete', 'claimKey', 'takeOverKey', 'createWithKey', 'releaseKey', 'deleteExpiredKeys', 'ping'] as const;
export type WriteName = (typeof WRITES)[number];
/** Every operation but these reads goes to the writer: a write added to the repository and not to WRITES does not compile. */
type Reads = 'findById' | 'list' | 'count' | 'listSlice' | 'listAt' | 'listFrom';
const everyWriteRouted: [Exclude<keyof UserRepository, Reads>] extends [WriteName] ? true : never = true;
void everyWriteRouted;

/** How a failed write crosses a process or thread boundary: the domain errors a write raises on purpose, or a bug. */
export type Failure = { kind: 'unavailable'; code: string } | { kind: 'key-in-flight' } | { kind: 'bug'; message: string; stack?: string };

/** A write to run, and its answer. */
export interface WriteRequest { readonly id: number; readonly operation: WriteName; readonly args: unknown[] }
export interface WriteAnswer { readonly id: number; readonly value?: unknown; readonly failure?: Failure }

/** Writes and answers travel in batches: those of one turn of the event loop share one message. */
type Message = { type: 'user-records:store:write'; requests: WriteRequest[] } | { type: 'user-records:store:written'; answers: WriteAnswer[] };

/**
 * Collects items until the end of this turn of the event loop, then hands them on together: under load a
 * message carries many writes (or answers), and a pipe write and a parse serve them all.
 */
export function perTurn<T>(flush: (items: T[]) => void): (item: T) => void {
  let items: T[] = [];
  const flushAll = () => {
    const batch = items;
    items = [];
    flush(batch);
  };
  return (item) => {
    if (items.push(item) === 1) setImmediate(flushAll);
  };
}

const isMessage = (message: unknown): message is Message =>
  typeof message === 'object' && message !== null && String((message as { type?: unknown }).type).startsWith('user-records:store:');

export function failureOf(error: unknown): Failure {
  if (error instanceof StoreUnavailableError) return { kind: 'unavailable', code: error.code };
  if (error instanceof IdempotencyKeyInFlightError) return { kind: 'key-in-flight' };
  return error instanceof Error ? { kind: 'bug', message: error.message, ...(error.stack ? { stack: error.stack } : {}) } : { kind: 'bug', message: String(error) };
}

function errorOf(failure: Failure): Error {
  if (failure.kind === 'unavailable') return new StoreUnavailableError({ code: failure.code });
  if (failure.kind === 'key-in-flight') return new IdempotencyKeyInFlightError();
  return new Error(`the store's writer failed: ${failure.message}`);
}

// A worker that has just gone cannot be written to: the error is dropped, as its request went with it.
const send = (to: ClusterWorker | NodeJS.Process, message: Message) => to.send?.(message, undefined, () => undefined);

/** How long after the writer thread stopped another is started; meanwhile writes fail at once (503). */
const WRITER_RESTART_MS = 1000;

/** What the primary's writer thread is started with. */
export interface WriterSettings { readonly database: DatabaseConfig; readonly timeouts: StoreTimeouts }

/**
 * In the cluster primary: runs every worker's writes in a writer thread, the store's one writer, restarted
 * if it dies. Writes in flight when it dies fail as outages (503).
 */
export function serveStoreWrites(settings: WriterSettings, logger: Logger): { close(): Promise<void> } {
  /** Writes handed to the thread: who asked, under which id. */
  const asked = new Map<number, { worker: ClusterWorker; id: number }>();
  /** Answers on their way back: one message per worker and turn. */
  const toWorkers = perTurn<{ worker: ClusterWorker; reply: WriteAnswer }>((replies) => {
    const byWorker = new Map<ClusterWorker, WriteAnswer[]>();
    for (const { worker, reply } of replies) {
      const answers = byWorker.get(worker);
      if (answers) answers.push(reply);
      else byWorker.set(worker, [reply]);
    }
    for (const [worker, answers] of byWorker) send(worker, { type: 'user-records:store:written', answers });
  });
  const toThread = perTurn<WriteRequest>((requests) => (thread ? thread.postMessage(requests) : requests.forEach(({ id }) => gone(id))));
  let next = 0;
  let closing = false;
  let thread: Thread | undefined = startThread();

  function answer({ id, value, failure }: WriteAnswer): void {
    const asker = asked.get(id);
    if (!asker) return;
    asked.delete(id);
    // Outages are the asking worker's to report (503, counted there); a bug is logged with its stack.
    if (failure?.kind === 'bug') logger.error({ err: failure }, 'a write failed in the store writer');
    toWorkers({ worker: asker.worker, reply: { id: asker.id, ...(failure ? { failure } : { value }) } });
  }
  const gone = (id: number) => answer({ id, failure: { kind: 'unavailable', code: 'WRITER_GONE' } });
  function startThread(): Thread {
    const started = new Thread(new URL('./writer-thread.js', import.meta.url), { workerData: settings });
    started.on('message', (answers: WriteAnswer[]) => answers.forEach(answer));
    started.on('error', (error) => logger.error({ err: error }, 'the store writer thread failed'));
    started.on('exit', () => {
      thread = undefined;
      [...asked.keys()].forEach(gone);
      if (closing) return;
      // A second later: a thread that cannot open the store must not be restarted in a tight loop.
      logger.error({ restartInMs: WRITER_RESTART_MS }, 'the store writer thread stopped; starting another');
      setTimeout(() => (thread ??= closing ? undefined : startThread()), WRITER_RESTART_MS);
    });
    return started;
  }
  const onMessage = (worker: ClusterWorker, message: unknown) => {
    if (!isMessage(message) || message.type !== 'user-records:store:write') return;
    for (const { id: askedAs, operation, args } of message.requests) {
      const id = next++;
      asked.set(id, { worker, id: askedAs });
      if ((WRITES as readonly string[]).includes(operation)) toThread({ id, operation, args });
      else answer({ id, failure: { kind: 'bug', message: `${operation} is not a write` } });
    }
  };
  cluster.on('message', onMessage);
  return {
    async close() {
      closing = true;
      cluster.off('message', onMessage);
      if (!thread) return;
      const exited = new Promise((resolve) => thread!.once('exit', resolve));
      thread.postMessage('close');
      await exited;
    },
  };
}

/**
 * In a cluster worker: `local` for reads, the primary for writes. A write the primary has not answered within
 * `timeoutMs` fails as an outage (503), as does every write in flight when the primary goes; like a query
 * timeout on PostgreSQL, such a write may still have been committed.
 */
export function writesThroughPrimary(local: UserRepository, timeoutMs: number): UserRepository & { stop(): void } {
  const pending = new Map<number, { settle: (answer: WriteAnswer) => void; timer: NodeJS.Timeout }>();
  const toPrimary = perTurn<WriteRequest>((requests) => send(process, { type: 'user-records:store:write', requests }));
  let next = 0;
  const onMessage = (message: unknown) => {
    if (isMessage(message) && message.type === 'user-records:store:written') for (const answer of message.answers) pending.get(answer.id)?.settle(answer);
  };
  const onDisconnect = () => {
    for (const { settle } of pending.values()) settle({ id: -1, failure: { kind: 'unavailable', code: 'WRITER_GONE' } });
  };
  process.on('message', onMessage);
  process.on('disconnect', onDisconnect);

  const call = (operation: WriteName, args: unknown[]) =>
    new Promise<unknown>((resolve, reject) => {
      if (!process.connected) return reject(new StoreUnavailableError({ code: 'WRITER_GONE' }));
      const id = next++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new StoreUnavailableError({ code: 'WRITER_TIMEOUT' }));
      }, timeoutMs);
      pending.set(id, {
        timer,
        settle: ({ value, failure }) => {
          clearTimeout(timer);
          pending.delete(id);
          if (failure) reject(errorOf(failure));
          else resolve(value);
        },
      });
      toPrimary({ id, operation, args });
    });
  const remote = Object.fromEntries(WRITES.map((operation) => [operation, (...args: unknown[]) => call(operation, args)])) as Pick<UserRepository, WriteName>;

  return {
    ...local,
    ...remote,
    // Ready when this worker can read and the writer can write.
    async ping() {
      await local.ping();
      await call('ping', []);
    },
    stop() {
      process.off('message', onMessage);
      process.off('disconnect', onDisconnect);
    },
  };
}
