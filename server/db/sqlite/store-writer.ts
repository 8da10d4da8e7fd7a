import cluster, { type Worker as ClusterWorker } from 'node:cluster';
import { Worker as Thread } from 'node:worker_threads';
import type { DatabaseConfig, StoreTimeouts } from '../../config.js';
import { IdempotencyKeyInFlightError, StoreUnavailableError, WriteOutcomeUnknownError } from '../../domain/errors.js';
import type { UserRepository } from '../../domain/user-repository.js';
import type { Logger } from '../../logger.js';
import { NOT_BEGUN } from '../write.js';
import { monotonicMs } from '../monotonic-clock.js';

// SQLite has one write lock per file, and workers that each commit on their own queue for it (SQLite's busy
// wait sleeps and polls, holding the waiting worker's event loop). So the store has one writer: workers read
// through their own connections (WAL readers never wait for the writer) and send each write to the primary as
// a message naming a repository operation and its arguments, all data. The primary hands it to its writer
// thread (writer-thread.ts), whose group commit (group-commit.ts) carries the writes of every worker in one
// commit. A thread, not the primary's own loop: that loop hands new connections to the workers, and a wait
// for the lock (held by a backup, say) must not stop it.
//
// A single process on an SQLite file writes through a writer thread of its own the same way (writesThroughThread):
// SQLite commits inside a synchronous call, so a commit on the event loop would hold every request, reads and
// /healthz included, for as long as the disk takes to sync (seconds on a stalled disk).
// Measurements and the alternatives: docs/decisions/sqlite-writer-thread.md.

/** The repository's operations that write, and `ping`, whose answer includes the writer's recent outages. */
export const WRITES = ['create', 'replace', 'patch', 'delete', 'claimKey', 'takeOverKey', 'createWithKey', 'releaseKey', 'deleteExpiredKeys', 'ping'] as const;
export type WriteName = (typeof WRITES)[number];
/** Every operation but these reads goes to the writer: a write added to the repository and not to WRITES does not compile. */
type Reads = 'findById' | 'list' | 'count' | 'listSlice' | 'listAt' | 'listFrom';
const everyWriteRouted: [Exclude<keyof UserRepository, Reads>] extends [WriteName] ? true : never = true;
void everyWriteRouted;

/**
 * How a failed write crosses a process or thread boundary: the domain errors a write raises on purpose (a
 * refusal, `unavailable`: not made; `unknown`: begun, its commit not confirmed), or a bug.
 */
export type Failure =
  | { kind: 'unavailable'; code: string }
  | { kind: 'unknown'; code: string }
  | { kind: 'key-in-flight' }
  | { kind: 'bug'; message: string; stack?: string };

/** A write to run, and its answer. */
export interface WriteRequest {
  readonly id: number;
  readonly operation: WriteName;
  readonly args: unknown[];
  /**
   * The monotonic time (monotonic-clock.ts) past which the writer must not begin it, fixed when the request
   * asked: its asker answers only after it. A write still waiting then (behind a sync that hung, a lock, a
   * stopped process) is refused, never begun.
   */
  readonly beginBy: number;
}
export interface WriteAnswer {
  readonly id: number;
  readonly value?: unknown;
  readonly failure?: Failure;
}

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
  if (error instanceof WriteOutcomeUnknownError) return { kind: 'unknown', code: error.code };
  if (error instanceof StoreUnavailableError) return { kind: 'unavailable', code: error.code };
  if (error instanceof IdempotencyKeyInFlightError) return { kind: 'key-in-flight' };
  return error instanceof Error
    ? { kind: 'bug', message: error.message, ...(error.stack ? { stack: error.stack } : {}) }
    : { kind: 'bug', message: String(error) };
}

function errorOf(failure: Failure): Error {
  if (failure.kind === 'unavailable') return new StoreUnavailableError({ code: failure.code });
  if (failure.kind === 'unknown') return new WriteOutcomeUnknownError({ code: failure.code });
  if (failure.kind === 'key-in-flight') return new IdempotencyKeyInFlightError();
  return new Error(`the store's writer failed: ${failure.message}`);
}

// A worker that has just gone cannot be written to: the error is dropped, as its request went with it.
const send = (to: ClusterWorker | NodeJS.Process, message: Message) => to.send?.(message, undefined, () => undefined);

/** How long after the writer thread stopped another is started; meanwhile writes fail at once (503). */
const WRITER_RESTART_MS = 1000;
/**
 * How long a closing writer thread may take to close its store. One still stuck after it (in a disk's sync
 * that does not return) is terminated and shutdown goes on, saying so: the process itself exits only once that
 * sync returns, as no thread can be stopped inside a system call. The writes it held are answered as of an
 * unknown outcome: their commit may have been under way.
 */
const WRITER_CLOSE_MS = 5000;

/** What a writer thread is started with. */
export interface WriterSettings {
  readonly database: DatabaseConfig;
  readonly timeouts: StoreTimeouts;
}

/** A writer thread: the store's one writer, restarted if it dies. */
interface WriterThread {
  /** Hands a write to the thread; its answer comes back through `answer`, a failure if the thread dies first. */
  post(request: WriteRequest): void;
  /** Lets the thread finish the writes it holds, closes its store and waits for it to exit (WRITER_CLOSE_MS at most). */
  close(): Promise<void>;
}

/** A write that never reached a writer: not made. */
const notHandedOver = (id: number): WriteAnswer => ({ id, failure: { kind: 'unavailable', code: 'WRITER_GONE' } });
/** A write a writer held when it went: its commit may have been under way. */
const lostWithWriter = (id: number): WriteAnswer => ({ id, failure: { kind: 'unknown', code: 'WRITER_GONE' } });

/**
 * Runs writes in a writer thread (writer-thread.ts), restarted a second after it dies. Writes posted while none
 * runs are refused at once (503); those it held when it died are answered at once as of an unknown outcome
 * (504): a thread may die after a commit and before its answers. Writes and answers cross as
 * JSON text, as they cross between processes: for these small objects V8's structured clone costs more.
 */
function startWriterThread(settings: WriterSettings, logger: Logger, answer: (answer: WriteAnswer) => void): WriterThread {
  /** Ids of the writes the running thread holds. */
  const held = new Set<number>();
  let closing = false;
  const toThread = perTurn<WriteRequest>((requests) => {
    if (!thread) {
      for (const { id } of requests) answer(notHandedOver(id));
      return;
    }
    for (const { id } of requests) held.add(id);
    thread.postMessage(JSON.stringify(requests));
  });
  let thread: Thread | undefined = start();

  function start(): Thread {
    const started = new Thread(new URL('./writer-thread.js', import.meta.url), { workerData: settings });
    started.on('message', (answers: string) => {
      let late = 0;
      for (const reply of JSON.parse(answers) as WriteAnswer[]) {
        held.delete(reply.id);
        // Outages are the asker's to report (503, counted there); a bug is logged with its stack.
        if (reply.failure?.kind === 'bug') logger.error({ err: reply.failure }, 'a write failed in the store writer');
        if (reply.failure?.kind === 'unavailable' && reply.failure.code === NOT_BEGUN) late++;
        answer(reply);
      }
      // Some of their askers may have answered already (504, their time ran out while the writer was held):
      // this says what became of those writes.
      if (late > 0) logger.warn({ writes: late }, 'refused writes the store writer could not begin within their statement timeout; none of them was made');
    });
    started.on('error', (error) => logger.error({ err: error }, 'the store writer thread failed'));
    started.on('exit', () => {
      thread = undefined;
      const lost = [...held];
      held.clear();
      for (const id of lost) answer(lostWithWriter(id));
      if (closing) return;
      // A second later: a thread that cannot open the store must not be restarted in a tight loop.
      logger.error({ restartInMs: WRITER_RESTART_MS }, 'the store writer thread stopped; starting another');
      setTimeout(() => (thread ??= closing ? undefined : start()), WRITER_RESTART_MS);
    });
    return started;
  }
  return {
    post: toThread,
    async close() {
      closing = true;
      if (!thread) return;
      const closed = thread;
      const exited = new Promise((resolve) => closed.once('exit', resolve));
      closed.postMessage('close');
      let timer: NodeJS.Timeout | undefined;
      const stuck = new Promise<'stuck'>((resolve) => (timer = setTimeout(() => resolve('stuck'), WRITER_CLOSE_MS)));
      if ((await Promise.race([exited, stuck])) === 'stuck') {
        logger.error({ waitedMs: WRITER_CLOSE_MS }, 'the store writer thread did not close its store in time; terminating it');
        void closed.terminate();
      }
      clearTimeout(timer);
    },
  };
}

/**
 * In the cluster primary: runs every worker's writes in a writer thread, the store's one writer, restarted
 * if it dies. Writes in flight when it dies are answered as of an unknown outcome (504).
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
  let next = 0;
  const answer = ({ id, value, failure }: WriteAnswer): void => {
    const asker = asked.get(id);
    if (!asker) return;
    asked.delete(id);
    toWorkers({ worker: asker.worker, reply: { id: asker.id, ...(failure ? { failure } : { value }) } });
  };
  const writer = startWriterThread(settings, logger, answer);
  const onMessage = (worker: ClusterWorker, message: unknown) => {
    if (!isMessage(message) || message.type !== 'user-records:store:write') return;
    for (const { id: askedAs, operation, args, beginBy } of message.requests) {
      const id = next++;
      asked.set(id, { worker, id: askedAs });
      if ((WRITES as readonly string[]).includes(operation)) writer.post({ id, operation, args, beginBy });
      else answer({ id, failure: { kind: 'bug', message: `${operation} is not a write` } });
    }
  };
  cluster.on('message', onMessage);
  return {
    async close() {
      cluster.off('message', onMessage);
      await writer.close();
    },
  };
}

/** A repository, and the way to stop it (and the writer it writes through). */
export type StoppableRepository = UserRepository & { stop(): Promise<void> };

/**
 * `local` for reads, `post` for writes, whose answers come to `settle`. A write the writer has not begun
 * within `statementMs` of its asking is refused by the writer and never begun (503). One begun by then has as
 * long again to commit: the asker waits for the writer's answer until twice `statementMs` after it asked,
 * and past that answers that the outcome is unknown (504), whatever held the writer (a sync that hung, a
 * stopped process). Nothing but the writer's own word makes a refusal: a write not answered may have begun.
 */
function writesThrough(local: UserRepository, statementMs: number, post: (request: WriteRequest) => void, canPost: () => boolean) {
  // In the order asked, and so of their deadlines (every write has the same timeout): one timer, for the first.
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void; deadline: number }>();
  let next = 0;
  // biome-ignore lint/correctness/noUnusedVariables: read by `timer ??=` below, which arms it only when none is armed.
  let timer: NodeJS.Timeout | undefined;
  const expire = () => {
    timer = undefined;
    const now = monotonicMs();
    for (const [id, write] of pending) {
      if (write.deadline > now) {
        timer = setTimeout(expire, write.deadline - now);
        return;
      }
      pending.delete(id);
      write.reject(new WriteOutcomeUnknownError({ code: 'WRITER_TIMEOUT' }));
    }
  };
  const call = (operation: WriteName, args: unknown[]) =>
    new Promise<unknown>((resolve, reject) => {
      if (!canPost()) return reject(new StoreUnavailableError({ code: 'WRITER_GONE' }));
      const id = next++;
      const beginBy = monotonicMs() + statementMs;
      pending.set(id, { resolve, reject, deadline: beginBy + statementMs });
      timer ??= setTimeout(expire, 2 * statementMs);
      post({ id, operation, args, beginBy });
    });
  const settle = ({ id, value, failure }: WriteAnswer) => {
    const write = pending.get(id);
    if (!write) return;
    pending.delete(id);
    if (failure) write.reject(errorOf(failure));
    else write.resolve(value);
  };
  const remote = Object.fromEntries(WRITES.map((operation) => [operation, (...args: unknown[]) => call(operation, args)])) as Pick<UserRepository, WriteName>;
  const repository: UserRepository = {
    ...local,
    ...remote,
    // Ready when this process can read and the writer can write; a writer that does not answer is an outage.
    async ping() {
      await local.ping();
      await call('ping', []).catch((error: unknown) => {
        throw error instanceof WriteOutcomeUnknownError ? new StoreUnavailableError({ code: error.code }) : error;
      });
    },
  };
  return {
    repository,
    settle,
    failAll: () => {
      for (const id of [...pending.keys()]) settle(lostWithWriter(id));
    },
  };
}

/**
 * In a cluster worker: `local` for reads, the primary for writes, within `statementMs` as above. Every write in
 * flight when the primary goes is answered as of an unknown outcome (504): the primary may have committed it.
 */
export function writesThroughPrimary(local: UserRepository, statementMs: number): StoppableRepository {
  const toPrimary = perTurn<WriteRequest>((requests) => send(process, { type: 'user-records:store:write', requests }));
  const { repository, settle, failAll } = writesThrough(local, statementMs, toPrimary, () => process.connected);
  const onMessage = (message: unknown) => {
    if (isMessage(message) && message.type === 'user-records:store:written') message.answers.forEach(settle);
  };
  process.on('message', onMessage);
  process.on('disconnect', failAll);
  return {
    ...repository,
    async stop() {
      process.off('message', onMessage);
      process.off('disconnect', failAll);
    },
  };
}

/**
 * In a single server process on an SQLite file: `local` for reads, a writer thread of this process for
 * writes, so that a commit's wait for the disk (an fsync of a slow or stalled disk may take seconds) holds
 * no request but the writes waiting for it. Reads and /healthz go on, as with WORKERS.
 */
export function writesThroughThread(local: UserRepository, settings: WriterSettings, logger: Logger): StoppableRepository {
  // Started before any write is asked.
  let writer: WriterThread | undefined;
  const { repository, settle } = writesThrough(
    local,
    settings.timeouts.statementMs,
    (request) => writer!.post(request),
    () => true,
  );
  writer = startWriterThread(settings, logger, settle);
  return { ...repository, stop: () => writer!.close() };
}
