import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { Logger } from '../../logger.js';
import { HttpProblem } from '../errors/problem.js';
import { createMetrics, type Metrics } from './metrics.js';

// With WORKERS, a scrape reaches one worker; that worker asks the primary, which collects every worker's metrics
// over IPC and sums them with prom-client's AggregatorRegistry.aggregate. The primary does not use prom-client's
// own clusterMetrics(): it waits a fixed 5 s, fails the whole scrape without naming the worker, and keeps every
// timed-out request in a map for good.

/** How long the primary waits for every worker's metrics; Prometheus's default scrape timeout is 10 s. */
export const COLLECT_TIMEOUT_MS = 2000;
/** How long a worker waits for the primary's answer (its collection, and a little for the primary itself). */
const SCRAPE_TIMEOUT_MS = COLLECT_TIMEOUT_MS + 1000;

type Message =
  | { type: 'user-records:metrics:collect'; id: number }
  | { type: 'user-records:metrics:collected'; id: number; metrics: object[] }
  | { type: 'user-records:metrics:scrape'; id: number }
  | { type: 'user-records:metrics:scraped'; id: number; text?: string; silent?: number[] };

const isMessage = (message: unknown): message is Message =>
  typeof message === 'object' && message !== null && String((message as { type?: unknown }).type).startsWith('user-records:metrics:');

/** What the primary could gather: the sum over every worker, or the pids of those that did not answer. */
type Gathered = { text: string; silent?: undefined } | { text?: undefined; silent: number[] };

/** In the primary: answers workers' scrapes with the sum of every serving worker's metrics. */
export function serveClusterMetrics(logger: Logger, timeoutMs = COLLECT_TIMEOUT_MS): void {
  const serving = new Set<Worker>();
  const waiting = new Map<number, (worker: Worker, metrics: object[]) => void>();
  let next = 0;
  // A worker answers once its server is set up; one still starting has served nothing yet.
  cluster.on('listening', (worker) => serving.add(worker));
  cluster.on('exit', (worker) => serving.delete(worker));
  // Scrapes that arrive while a collection is under way share it: a flood of scrapes costs one at a time.
  let underWay: Promise<Gathered> | undefined;
  const gather = () =>
    (underWay ??= collect(
      [...serving].filter((worker) => worker.isConnected()),
      next++,
      waiting,
      timeoutMs,
    ).finally(() => (underWay = undefined)));
  cluster.on('message', (worker, message: unknown) => {
    if (!isMessage(message)) return;
    if (message.type === 'user-records:metrics:collected') waiting.get(message.id)?.(worker, message.metrics);
    if (message.type !== 'user-records:metrics:scrape') return;
    gather().then(
      (gathered) => {
        if (gathered.silent) logger.warn({ workerPids: gathered.silent, timeoutMs }, 'workers did not hand in their metrics; the scrape is refused');
        send(worker, { type: 'user-records:metrics:scraped', id: message.id, ...gathered });
      },
      (error: unknown) => {
        // Unanswered, the asking worker refuses its scrape when its own wait ends.
        logger.error({ err: error }, "could not sum the workers' metrics");
      },
    );
  });
}

/** Asks each worker for its metrics and sums them once all have answered, or names those still running that did not. */
function collect(workers: Worker[], id: number, waiting: Map<number, (worker: Worker, metrics: object[]) => void>, timeoutMs: number): Promise<Gathered> {
  const answers = new Map<Worker, object[]>();
  return new Promise((resolve, reject) => {
    const finish = () => {
      clearTimeout(timer);
      waiting.delete(id);
      const silent = workers.filter((worker) => !answers.has(worker) && !worker.isDead()).map((worker) => worker.process.pid ?? 0);
      if (silent.length > 0) return resolve({ silent });
      // aggregate() throws on what it cannot sum: that must reject this scrape, not escape into the primary.
      Promise.resolve(answers)
        .then((all) => AggregatorRegistry.aggregate([...all.values()]).metrics())
        .then((text) => resolve({ text }), reject);
    };
    // One that exits meanwhile is waited for until the deadline, then left out: its counts went with it.
    const check = () => workers.every((worker) => answers.has(worker)) && finish();
    const timer = setTimeout(finish, timeoutMs);
    waiting.set(id, (worker, metrics) => {
      answers.set(worker, metrics);
      check();
    });
    for (const worker of workers) send(worker, { type: 'user-records:metrics:collect', id });
    check();
  });
}

// A worker that has just gone cannot be written to: the error is dropped, and its answer is simply missing.
const send = (to: Worker | NodeJS.Process, message: Message) => to.send?.(message, undefined, () => undefined);

type Scraped = Extract<Message, { type: 'user-records:metrics:scraped' }>;

/** The 503 of a scrape that could not be summed, naming who did not answer. */
function incompleteScrape(answer: Scraped | undefined): HttpProblem {
  const what = answer?.silent
    ? answer.silent.length > 1
      ? `workers ${answer.silent.join(', ')} did not hand in their metrics`
      : `worker ${answer.silent[0]} did not hand in its metrics`
    : 'the primary process did not sum them';
  return new HttpProblem('metrics-unavailable', `The metrics are a sum over every worker, and ${what} in time; no partial sum is reported.`);
}

/** In a worker: hands this worker's metrics to the primary, and renders a scrape as the sum over all workers. */
function shareWorkerMetrics(metrics: Metrics): { render(): Promise<string>; stop(): void } {
  const scrapes = new Map<number, (answer: Scraped) => void>();
  let next = 0;
  const onMessage = (message: unknown) => {
    if (!isMessage(message)) return;
    if (message.type === 'user-records:metrics:collect') {
      // One that cannot be read is not handed in: the primary then names this worker as silent.
      metrics.json().then(
        (json) => send(process, { type: 'user-records:metrics:collected', id: message.id, metrics: json }),
        () => undefined,
      );
    }
    if (message.type === 'user-records:metrics:scraped') scrapes.get(message.id)?.(message);
  };
  process.on('message', onMessage);
  const render = async () => {
    const id = next++;
    const answer = await new Promise<Scraped | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), SCRAPE_TIMEOUT_MS);
      scrapes.set(id, (scraped) => {
        clearTimeout(timer);
        resolve(scraped);
      });
      send(process, { type: 'user-records:metrics:scrape', id });
    }).finally(() => scrapes.delete(id));
    if (answer?.text !== undefined) return answer.text;
    metrics.scrapeIncomplete();
    throw incompleteScrape(answer);
  };
  return { render, stop: () => process.off('message', onMessage) };
}

/** This server's metrics, and how a scrape renders them: its own, or in a cluster worker the sum over all. */
export function createServerMetrics(): { metrics: Metrics; render(): Promise<string>; stop(): void } {
  if (!cluster.isWorker) {
    const metrics = createMetrics();
    return { metrics, render: metrics.render, stop: () => undefined };
  }
  // The pid, as in every log line of the worker.
  const metrics = createMetrics({ worker: String(process.pid) });
  return { metrics, ...shareWorkerMetrics(metrics) };
}
