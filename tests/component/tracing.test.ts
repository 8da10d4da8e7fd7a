import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { destination } from 'pino';
import { basicAuth } from '../support/http-client.js';
import { TEST_CREDENTIALS, withTestServer } from '../support/test-server.js';

// Tracing through a real OTLP/HTTP receiver that the test runs: the server posts its spans there as JSON.

interface OtlpAttribute {
  readonly key: string;
  readonly value: { readonly stringValue?: string; readonly intValue?: string | number };
}
interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: number;
  readonly attributes: readonly OtlpAttribute[];
}

/** An OTLP/HTTP collector on port 0 that keeps every span it is sent. */
async function startCollector(): Promise<{ url: string; spans: OtlpSpan[]; posts: string[]; server: Server }> {
  const spans: OtlpSpan[] = [];
  const posts: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      posts.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      const payload = JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
      for (const resource of payload.resourceSpans) for (const scope of resource.scopeSpans) spans.push(...scope.spans);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, posts, server };
}

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue));
};

const scratch = mkdtempSync(join(tmpdir(), 'tracing-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';

test("a span per request, continuing the caller's traceparent and returning its own, with a span per store query under it", async () => {
  const collector = await startCollector();
  const logFile = join(scratch, 'server.log');
  const secretName = 'Ottoline Quartermaine';
  let traceparent: string | null = null;
  try {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '50', LOG_LEVEL: 'info' };
    await withTestServer({ env, logTo: destination({ dest: logFile, sync: true }) }, async (_server, api) => {
      const res = await api.get('/users/2', { headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` } });
      expect(res.status).toBe(200);
      traceparent = res.headers.get('traceparent');
      expect((await api.get('/protected-resource', { headers: basicAuth() })).status).toBe(200);
      expect((await api.post('/users', { firstName: secretName, lastName: 'X', email: 'ottoline@example.com' })).status).toBe(201);
    });
    // Stopping the server exports what was still queued.
    expect(collector.posts[0]).toBe('POST /v1/traces application/json');
    const request = collector.spans.find((span) => span.traceId === CALLER_TRACE && span.kind === 2)!;
    expect(request).toMatchObject({ parentSpanId: CALLER_SPAN, name: 'GET /users/{id}' });
    expect(attribute(request, 'user_records.operation_id')).toBe('getUser');
    expect(attribute(request, 'http.response.status_code')).toBe(200);
    expect(traceparent).toBe(`00-${CALLER_TRACE}-${request.spanId}-01`);
    const queries = collector.spans.filter((span) => span.parentSpanId === request.spanId);
    expect(queries.map((span) => span.name)).toContain('db select');
    expect(attribute(queries[0]!, 'db.query.text')).toMatch(/^select .* from "users" where "id" = \?|\$1/);
    // Every request of the run has its own span, and a create its insert under it.
    const create = collector.spans.find((span) => attribute(span, 'user_records.operation_id') === 'createUser')!;
    expect(collector.spans.some((span) => span.parentSpanId === create.spanId && span.name === 'db insert')).toBe(true);
    // Nothing a client sent leaves the service in a span: no credentials, no names, no e-mail addresses.
    const everything = JSON.stringify(collector.spans);
    for (const secret of [TEST_CREDENTIALS.password, 'Basic ', secretName, 'ottoline@example.com']) expect(everything).not.toContain(secret);
    // The access log names the trace of each request.
    const line = readFileSync(logFile, 'utf8')
      .split('\n')
      .find((text) => text.includes('"msg":"request"') && text.includes('"path":"/users/2"'))!;
    expect(JSON.parse(line)).toMatchObject({ traceId: CALLER_TRACE, operationId: 'getUser' });
  } finally {
    collector.server.close();
  }
});

test('a collector that is down costs no request: spans are dropped, and the failures are counted', async () => {
  const collector = await startCollector();
  await new Promise<void>((resolve) => collector.server.close(() => resolve()));
  const env = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '10', OTEL_EXPORTER_OTLP_TIMEOUT: '300' };
  await withTestServer({ env }, async (_server, api) => {
    for (let i = 0; i < 5; i++) expect((await api.get('/users/1')).status).toBe(200);
    let metrics = '';
    for (let tries = 0; tries < 50 && !/^tracing_export_failures_total [1-9]/m.test(metrics); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      metrics = (await api.get('/metrics')).text;
    }
    expect(metrics).toMatch(/^tracing_export_failures_total [1-9]\d*$/m);
  });
});

test('without OTEL_EXPORTER_OTLP_ENDPOINT nothing is traced and no traceparent is returned', () =>
  withTestServer({}, async (_server, api) => {
    const res = await api.get('/users/2', { headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` } });
    expect(res.headers.get('traceparent')).toBeNull();
  }));
