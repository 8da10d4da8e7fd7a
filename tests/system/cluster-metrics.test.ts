import { execFileSync } from 'node:child_process';
import { request } from 'node:http';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { createTestStore, type TestStore } from '../support/test-store.js';

// With WORKERS, a scrape of /metrics reaches one worker but reports the sum over all of them; when a worker
// cannot hand in its metrics, the scrape is refused with a 503 naming it rather than reporting a partial sum.

/** One request on a connection of its own, so that the cluster's round robin spreads them over the workers. */
function get(url: string, timeoutMs = 10_000): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, timeout: timeoutMs }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

/** The value of one series in Prometheus text, found by its name and some of its labels. */
function metricValue(text: string, name: string, labels: Record<string, string>): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const workersOf = (pid: number) =>
  execFileSync('ps', ['--ppid', String(pid), '-o', 'pid='])
    .toString()
    .trim()
    .split(/\s+/)
    .map(Number);
const servedBy = (output: string, operationId: string) =>
  new Set(
    output
      .split('\n')
      .filter((l) => l.includes(`"operationId":"${operationId}"`) && l.includes('"msg":"request"'))
      .map((l) => JSON.parse(l).pid as number),
  );

let store: TestStore;
let server: ServerProcess;
beforeAll(async () => {
  store = await createTestStore('sqlite');
  server = await startServerProcess(store, { WORKERS: '2' });
});
afterAll(async () => {
  await server.stop('SIGKILL');
  await store.drop();
});

test("one scrape counts every request, whichever worker served it, and labels each worker's process metrics", async () => {
  const requests = 60;
  for (let sent = 0; sent < requests; sent += 10) {
    const batch = await Promise.all(Array.from({ length: 10 }, () => get(`${server.url}/users/1`)));
    expect(batch.map((r) => r.status)).toEqual(Array(10).fill(200));
  }
  const workers = workersOf(server.pid);
  expect(servedBy(server.output(), 'getUser')).toEqual(new Set(workers));
  const scrape = await get(`${server.url}/metrics`);
  expect(scrape.status).toBe(200);
  expect(metricValue(scrape.text, 'http_request_duration_seconds_count', { operation_id: 'getUser', status: '200' })).toBe(requests);
  for (const pid of workers) {
    expect(metricValue(scrape.text, 'process_resident_memory_bytes', { worker: String(pid) })).toBeGreaterThan(0);
    expect(metricValue(scrape.text, 'process_start_time_seconds', { worker: String(pid) })).toBeGreaterThan(0);
  }
  // The service's own metrics carry no worker label: they are one sum.
  expect(scrape.text).not.toMatch(/^http_request_duration_seconds_count\{[^}]*worker=/m);
}, 30_000);

test('a worker that cannot answer makes the scrape a 503 naming it, within the bound; it counts once it answers again', async () => {
  const [stuck = 0] = workersOf(server.pid);
  process.kill(stuck, 'SIGSTOP');
  try {
    const started = Date.now();
    // At most one of these reaches the stopped worker (and waits for it); the others reach the live one.
    const timed = () => get(`${server.url}/metrics`, 8000).then((response) => ({ ...response, ms: Date.now() - started }));
    const scrapes = await Promise.allSettled(Array.from({ length: 3 }, timed));
    const refused = scrapes.flatMap((s) => (s.status === 'fulfilled' && s.value.status === 503 ? [s.value] : []));
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(refused[0]!.text)).toMatchObject({ type: 'urn:user-records:problem:metrics-unavailable', status: 503 });
    expect(JSON.parse(refused[0]!.text).detail).toContain(String(stuck));
    // The primary's bound is 2 s; generous for this 2-core machine.
    expect(refused[0]!.ms).toBeLessThan(6000);
    expect(server.output()).toMatch(new RegExp(`"workerPids":\\[${stuck}\\][^\\n]*"msg":"workers did not hand in their metrics`));
  } finally {
    process.kill(stuck, 'SIGCONT');
  }
  const scrape = await get(`${server.url}/metrics`);
  expect(scrape.status).toBe(200);
  expect(Number(/^metrics_scrapes_incomplete_total (\d+)$/m.exec(scrape.text)?.[1])).toBeGreaterThanOrEqual(1);
}, 30_000);
