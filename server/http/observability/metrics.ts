import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/** The metrics of one server, in a registry of its own (several servers may share a process in tests). */
export interface Metrics {
  observe(operationId: string, method: string, status: number, seconds: number): void;
  storeUnavailable(): void;
  render(): Promise<string>;
}

type Labels = 'operation_id' | 'method' | 'status';

/** Creates the registry with the request histogram, the store outage counter and Node's process metrics. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
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
    render: () => registry.metrics(),
  };
}
