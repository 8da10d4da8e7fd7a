import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type TextMapPropagator, type Tracer } from '@opentelemetry/api';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import type { TracingConfig } from './config.js';

// OpenTelemetry tracing, off unless OTEL_EXPORTER_OTLP_ENDPOINT is set: a span per request (named after the
// operation, W3C traceparent honoured and returned) and one per store query under it. Spans carry operation
// ids, routes, statuses and SQL text with placeholders, never parameter values, headers or bodies: no
// credentials and no personal data leave the service this way. The SDK, the exporter and the context
// manager are loaded only when tracing is on: loaded always, they would take memory in every server.

/** Spans waiting for export at most; past it new spans are dropped, so a dead collector costs bounded memory. */
const MAX_QUEUED_SPANS = 2048;

/** What a store query tells the tracer: its SQL text (placeholders only), how long it took, and whether it failed. */
export interface QueryEvent {
  readonly sql: string;
  readonly durationMs: number;
  readonly failed: boolean;
}

/** The tracing of one server; every method is cheap or absent when tracing is off. */
export interface Tracing {
  /** Starts a request's span from the request headers (a W3C traceparent continues the caller's trace). */
  startRequest(method: string, headers: Readonly<Record<string, string | string[] | undefined>>): RequestSpan | undefined;
  /** Records a finished store query as a child of the active request's span; undefined when tracing is off. */
  readonly onQuery: ((event: QueryEvent) => void) | undefined;
  /** Exports what is queued, then stops. */
  shutdown(): Promise<void>;
}

/** A request's span, with the context its work runs in. */
export interface RequestSpan {
  readonly traceId: string;
  /** The traceparent of this span, for the response. */
  readonly traceparent: string;
  /** Runs the request's work inside the span's context, so that store queries become its children. */
  run<T>(work: () => T): T;
  end(operationId: string, route: string | undefined, status: number): void;
}

const headerGetter = {
  keys: (carrier: Readonly<Record<string, unknown>>) => Object.keys(carrier),
  get: (carrier: Readonly<Record<string, string | string[] | undefined>>, key: string) => carrier[key],
};

/** Counts and reports failed exports (a collector that is down or refuses), without holding spans for it. */
function reportingExporter(inner: SpanExporter, success: number, onExportFailure: (error: unknown) => void): SpanExporter {
  return {
    export(spans: ReadableSpan[], done) {
      inner.export(spans, (result) => {
        if (result.code !== success) onExportFailure(result.error);
        done(result);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}

function requestSpan(tracer: Tracer, W3C: TextMapPropagator, method: string, headers: Readonly<Record<string, string | string[] | undefined>>): RequestSpan {
  const parent = W3C.extract(ROOT_CONTEXT, headers, headerGetter);
  const span: Span = tracer.startSpan(`${method}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } }, parent);
  const active: Context = trace.setSpan(parent, span);
  const carrier: Record<string, string> = {};
  W3C.inject(active, carrier, { set: (target, key, value) => (target[key] = value) });
  return {
    traceId: span.spanContext().traceId,
    traceparent: carrier.traceparent!,
    run: (work) => context.with(active, work),
    end(operationId, route, status) {
      span.updateName(route ? `${method} ${route}` : method);
      span.setAttributes({ 'user_records.operation_id': operationId, 'http.response.status_code': status, ...(route ? { 'http.route': route } : {}) });
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    },
  };
}

/** One span per store query, ended when it is recorded (it started `durationMs` ago). */
function querySpans(tracer: Tracer, system: string) {
  return ({ sql, durationMs, failed }: QueryEvent) => {
    const parent = context.active();
    if (trace.getSpan(parent) === undefined) return; // Start-up, migrations and the key sweep belong to no request.
    const operation = /^\s*(\w+)/.exec(sql)?.[1]?.toLowerCase() ?? 'query';
    const span = tracer.startSpan(
      `db ${operation}`,
      {
        kind: SpanKind.CLIENT,
        startTime: performance.timeOrigin + performance.now() - durationMs,
        attributes: { 'db.system.name': system, 'db.operation.name': operation, 'db.query.text': sql.slice(0, 500) },
      },
      parent,
    );
    if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  };
}

let contextManaged = false;

/** Sets up tracing for one server; a no-op when `config` is undefined. */
export async function createTracing(config: TracingConfig | undefined, store: string, onExportFailure: (error: unknown) => void): Promise<Tracing> {
  if (config === undefined) return { startRequest: () => undefined, onQuery: undefined, shutdown: async () => undefined };
  const [
    { ExportResultCode, W3CTraceContextPropagator },
    { OTLPTraceExporter },
    { resourceFromAttributes },
    { AsyncLocalStorageContextManager },
    { BatchSpanProcessor, TracerProvider },
  ] = await Promise.all([
    import('@opentelemetry/core'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/sdk-trace'),
  ]);
  const otlp = new OTLPTraceExporter({ url: `${config.endpoint.replace(/\/$/, '')}/v1/traces`, timeoutMillis: config.exportTimeoutMs });
  const exporter = reportingExporter(otlp, ExportResultCode.SUCCESS, onExportFailure);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName }),
    spanProcessors: [new BatchSpanProcessor({ exporter, maxQueueSize: MAX_QUEUED_SPANS, scheduledDelayMillis: config.exportDelayMs })],
  });
  // Spans follow a request across awaits: the API's context is carried by AsyncLocalStorage. The context
  // manager is global and set once per process; the tracer stays this server's own, so several servers in
  // one process (tests) keep their spans apart.
  if (!contextManaged) {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    contextManaged = true;
  }
  const tracer = provider.getTracer('user-records');
  const W3C = new W3CTraceContextPropagator();
  return {
    startRequest: (method, headers) => requestSpan(tracer, W3C, method, headers),
    onQuery: querySpans(tracer, store),
    // The last export may fail like any other: that loses spans, never the shutdown.
    shutdown: () => provider.shutdown().catch(onExportFailure),
  };
}
