import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The limits that refuse or close a connection (label values of http_connections_limited_total). */
export type ConnectionLimit = 'max_connections' | 'max_connections_per_client' | 'pipeline_depth' | 'send_timeout';

/** The metrics of one server, in a registry of its own (several servers may share a process in tests). */
export interface Metrics {
  observe(operationId: string, method: string, status: number, seconds: number): void;
  storeUnavailable(): void;
  writeOutcomeUnknown(): void;
  /** A request refused by a per-client limit or by the password-hash gate, by which one. */
  limited(limit: LimitName): void;
  /** A well-formed credential that did not match. */
  authFailed(): void;
  /** A store connection failed (lost, killed, timed out), by the store's code. */
  storeConnectionFault(code: string): void;
  /** A connection refused (max_connections, max_connections_per_client) or closed (pipeline_depth, send_timeout) by a limit. */
  connectionLimited(limit: ConnectionLimit): void;
  /** How many connections the server holds now. */
  openConnections(count: number): void;
  /** A batch of trace spans could not be exported. */
  tracingExportFailed(): void;
  /** A request refused (503) because the shared store of a limit's counts failed or did not answer in time. */
  limitStoreUnavailable(limit: CountedLimit): void;
  /** A scrape that could not report every worker's metrics (cluster-metrics.ts) and was refused. */
  scrapeIncomplete(): void;
  /** A lookup in the cached replies of reads (reply-cache.ts): whether it found one. */
  replyLookup(found: boolean): void;
  render(): Promise<string>;
  /** The metrics as prom-client's JSON, what a cluster worker hands to the primary to be summed. */
  json(): Promise<object[]>;
}

type Labels = 'operation_id' | 'method' | 'status';

/** The limits that count per client in a store shared by the deployment. */
export type CountedLimit = 'credentials' | 'writes';

/** The limits that refuse requests: failed credentials, writes, the two bounds of the password-hash gate, and the queue of searches. */
export type LimitName = 'credentials' | 'writes' | 'hash_per_client' | 'hash_queue_full' | 'search_queue_full' | 'search_client_share';

/**
 * Creates the registry with the request histogram, the store outage counter and Node's process metrics.
 * A cluster worker passes its `worker` label, which only the process metrics carry: summed over the workers,
 * the service's counters and gauges add up, while each worker's memory, CPU and event loop stay its own.
 */
export function createMetrics(processLabels: Readonly<Record<string, string>> = {}): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, labels: processLabels });
  const durations = new Histogram<Labels>({
    name: 'http_request_duration_seconds',
    help: 'Duration of HTTP requests by operation and status.',
    labelNames: ['operation_id', 'method', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const outages = new Counter({
    name: 'store_unavailable_total',
    help: 'Requests answered 503 because the store could not be reached.',
    registers: [registry],
  });
  const unknownOutcomes = new Counter({
    name: 'store_write_outcome_unknown_total',
    help: 'Writes answered 504: begun within their time, but their commit not confirmed by the store before it ran out.',
    registers: [registry],
  });
  const limited = new Counter<'limit'>({
    name: 'rate_limited_total',
    help: 'Requests refused by a per-client limit (credentials, writes), by the password-hash gate (hash_*) or by the queue of searches (search_queue_full, search_client_share).',
    labelNames: ['limit'],
    registers: [registry],
  });
  const authFailures = new Counter({
    name: 'auth_failures_total',
    help: 'Well-formed Basic credentials that did not match.',
    registers: [registry],
  });
  const connectionFaults = new Counter<'code'>({
    name: 'store_connection_errors_total',
    help: 'Store connections that failed (lost, killed, reset, timed out) and were discarded, by code.',
    labelNames: ['code'],
    registers: [registry],
  });
  const connectionsLimited = new Counter<'limit'>({
    name: 'http_connections_limited_total',
    help: 'Connections refused with 503 (max_connections, max_connections_per_client) or closed (pipeline_depth, send_timeout) by a limit.',
    labelNames: ['limit'],
    registers: [registry],
  });
  const exportFailures = new Counter({
    name: 'tracing_export_failures_total',
    help: 'Batches of trace spans that could not be exported (and were dropped).',
    registers: [registry],
  });
  const countsUnavailable = new Counter<'limit'>({
    name: 'rate_limit_store_unavailable_total',
    help: "Requests refused with 503 because the shared store of their limit's counts (Redis, the database, the cluster primary) failed or did not answer in time, by limit (credentials, writes).",
    labelNames: ['limit'],
    registers: [registry],
  });
  const open = new Gauge({ name: 'http_open_connections', help: 'Connections the server holds.', registers: [registry] });
  const incomplete = new Counter({
    name: 'metrics_scrapes_incomplete_total',
    help: 'Scrapes of /metrics refused with 503 because a worker did not hand in its metrics in time.',
    registers: [registry],
  });
  const lookups = new Counter({
    name: 'http_kept_reply_lookups_total',
    help: 'Lookups of replies of reads cached until the store changes, by whether one was found (hit) or the store was read (miss).',
    labelNames: ['result'],
    registers: [registry],
  });
  const [hits, misses] = [lookups.labels({ result: 'hit' }), lookups.labels({ result: 'miss' })];
  // One series per operation, method and status, looked up once: prom-client would otherwise hash the
  // label object on every observation. The keys are bounded: operations and statuses are the service's
  // own, and Node's parser admits only the methods it knows.
  const series = new Map<string, Histogram.Internal<Labels>>();
  const seriesOf = (operationId: string, method: string, status: number) => {
    const key = `${operationId} ${method} ${status}`;
    let found = series.get(key);
    if (!found) {
      found = durations.labels({ operation_id: operationId, method, status: String(status) });
      series.set(key, found);
    }
    return found;
  };
  return {
    observe: (operationId, method, status, seconds) => seriesOf(operationId, method, status).observe(seconds),
    storeUnavailable: () => outages.inc(),
    writeOutcomeUnknown: () => unknownOutcomes.inc(),
    limited: (limit) => limited.inc({ limit }),
    authFailed: () => authFailures.inc(),
    // The codes are the store's (SQLSTATEs, errnos) or the pool's few own: a bounded set.
    storeConnectionFault: (code) => connectionFaults.inc({ code }),
    connectionLimited: (limit) => connectionsLimited.inc({ limit }),
    openConnections: (count) => open.set(count),
    tracingExportFailed: () => exportFailures.inc(),
    limitStoreUnavailable: (limit) => countsUnavailable.inc({ limit }),
    scrapeIncomplete: () => incomplete.inc(),
    replyLookup: (found) => (found ? hits : misses).inc(),
    render: () => registry.metrics(),
    // prom-client omits process_start_time_seconds when it sums workers; with the worker label nothing of a
    // process metric is combined, so it is kept like the rest.
    json: async () => (await registry.getMetricsAsJSON()).map((metric) => (metric.aggregator === 'omit' ? { ...metric, aggregator: 'first' } : metric)),
  };
}
