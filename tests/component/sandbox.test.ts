import { DEMO_USERS } from '../../server/db/demo-data.js';
import { collectExamples, exampleLabel } from '../support/contract-examples.js';
import { useTestServer, withTestServer } from '../support/test-server.js';

// Sandbox mode (`make sandbox`): the real service on an in-memory store, with the controls a frontend's tests
// use. Each control is tested in sandbox mode, and absent from a normal start.

const SANDBOX = { SANDBOX: 'true', DATABASE_URL: 'sqlite::memory:' };
const demoList = DEMO_USERS.map((user, i) => ({ id: i + 1, ...user }));

/** How long a request took to be answered, with its response. */
async function timed(url: string, init?: RequestInit): Promise<{ ms: number; response: Response; body: any }> {
  const started = performance.now();
  const response = await fetch(url, init);
  const text = await response.text();
  return { ms: performance.now() - started, response, body: text === '' ? undefined : JSON.parse(text) };
}

describe('a normal start', () => {
  const sut = useTestServer();

  test('has no reset: 404, as for any path the service does not have', async () => {
    const res = await sut.api.post('/__sandbox/reset', undefined);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({
      type: 'urn:user-records:problem:not-found',
      detail: 'No route matches POST /__sandbox/reset. The API reference is at /docs.',
    });
  });

  test('ignores delay, even out of range, and answers at once', async () => {
    const { ms, response } = await timed(`${sut.server.url}/users/2?delay=10`);
    expect(response.status).toBe(200);
    expect(ms).toBeLessThan(5000);
    expect((await fetch(`${sut.server.url}/users/2?delay=99`)).status).toBe(200);
  });

  test('ignores Prefer: it runs the operation', async () => {
    const res = await sut.api.get('/users/2', { headers: { Prefer: 'code=404' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('preference-applied')).toBeNull();
  });

  test('serves the production contract: no sandbox control in /openapi.json or /openapi.yaml', async () => {
    const json = await (await fetch(`${sut.server.url}/openapi.json`)).json();
    const operations = Object.values(json.paths as Record<string, Record<string, { parameters?: { $ref?: string }[] }>>).flatMap((item) =>
      Object.entries(item)
        .filter(([key]) => key !== 'parameters')
        .map(([, operation]) => operation),
    );
    expect(Object.keys(json.paths)).not.toContain('/__sandbox/reset');
    expect(operations.flatMap((operation) => operation.parameters ?? []).filter((parameter) => /SandboxDelay|Prefer/.test(parameter.$ref ?? ''))).toEqual([]);
    expect(JSON.stringify(json)).not.toMatch(/__sandbox|SandboxDelay|SandboxReset|x-sandbox-only/);
    const yaml = await (await fetch(`${sut.server.url}/openapi.yaml`)).text();
    expect(yaml).not.toMatch(/__sandbox|SandboxDelay|Prefer:/);
  });

  test('admits no local development origin it was not given', async () => {
    const res = await fetch(`${sut.server.url}/users`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://localhost:5173', 'Access-Control-Request-Method': 'POST' },
    });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('sandbox mode', () => {
  const sut = useTestServer({ env: SANDBOX });

  test('starts with the demo data', async () => {
    expect((await sut.api.get('/users')).body).toEqual(demoList);
  });

  test('serves the sandbox variant: the reset, and delay and Prefer on every operation, in /openapi.json and /openapi.yaml', async () => {
    const json = await (await fetch(`${sut.server.url}/openapi.json`)).json();
    expect(Object.keys(json.paths)).toContain('/__sandbox/reset');
    const operations = Object.values(json.paths as Record<string, Record<string, { parameters?: { $ref?: string }[] }>>).flatMap((item) =>
      Object.entries(item)
        .filter(([key]) => key !== 'parameters')
        .map(([, operation]) => operation),
    );
    for (const operation of operations) {
      expect((operation.parameters ?? []).map((parameter) => parameter.$ref)).toEqual(
        expect.arrayContaining(['#/components/parameters/SandboxDelay', '#/components/parameters/Prefer']),
      );
    }
    const yaml = await (await fetch(`${sut.server.url}/openapi.yaml`)).text();
    expect(yaml).toMatch(/^# Generated from openapi\/user-records.yaml and openapi\/sandbox.overlay.yaml/);
    expect(yaml).toContain('/__sandbox/reset:');
  });

  test('POST /__sandbox/reset restores the demo data: users, ids from 1 again, idempotency keys forgotten', async () => {
    const key = { 'Idempotency-Key': 'reset-test' };
    const created = await sut.api.post('/users', { firstName: 'Ada', lastName: 'Quill', email: 'ada@example.com' }, { headers: key });
    await sut.api.request('PATCH', '/users/2', { json: { lastName: 'Changed' } });
    await sut.api.delete('/users/3');
    expect((await sut.api.get('/users')).body).not.toEqual(demoList);

    const reset = await sut.api.post('/__sandbox/reset', {});
    expect(reset.status).toBe(204);
    expect(reset.text).toBe('');
    expect((await sut.api.get('/users')).body).toEqual(demoList);
    expect((await sut.api.get('/users/2')).headers.get('etag')).toBe('"1"');
    // The same key and body create anew (the key was forgotten), and the new user gets id 13 again.
    const again = await sut.api.post('/users', { firstName: 'Ada', lastName: 'Quill', email: 'ada@example.com' }, { headers: key });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.body).toEqual({ ...created.body, id: 13 });
    await sut.api.post('/__sandbox/reset', {});
  });

  // Any page on any origin can send a CORS "simple" request without asking first (a `no-cors` fetch, a form):
  // no body, or a text/plain, form or multipart one. A reset takes what only a preflighted request carries, a
  // JSON body, and the preflight admits local development origins alone (issue 24, item 9).
  test.each([
    ['no body, as a no-cors fetch sends it', {}, undefined, 415, 'The request body must be application/json (got none).'],
    ['{} as text/plain', { 'content-type': 'text/plain' }, '{}', 415, 'The request body must be application/json (got text/plain).'],
    [
      'a form',
      { 'content-type': 'application/x-www-form-urlencoded' },
      'all=1',
      415,
      'The request body must be application/json (got application/x-www-form-urlencoded).',
    ],
    [
      'a multipart form',
      { 'content-type': 'multipart/form-data; boundary=x' },
      '--x--\r\n',
      415,
      'The request body must be application/json (got multipart/form-data; boundary=x).',
    ],
  ])('a reset with %s, from another origin, is refused and resets nothing', async (_shape, headers, body, status, detail) => {
    await sut.api.delete('/users/4');
    const res = await sut.api.request('POST', '/__sandbox/reset', { raw: body, headers: { origin: 'https://attacker.example', ...headers } });
    expect({ status: res.status, detail: res.body.detail }).toEqual({ status, detail });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect((await sut.api.get('/users/4')).status).toBe(404);
    expect((await sut.api.post('/__sandbox/reset', {})).status).toBe(204);
  });

  test('a JSON reset from another origin is never sent: the preflight it needs admits no other origin', async () => {
    const init = { method: 'OPTIONS', headers: { 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' } };
    const other = await fetch(`${sut.server.url}/__sandbox/reset`, { ...init, headers: { ...init.headers, Origin: 'https://attacker.example' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const local = await fetch(`${sut.server.url}/__sandbox/reset`, { ...init, headers: { ...init.headers, Origin: 'http://localhost:5173' } });
    expect(local.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(local.headers.get('access-control-allow-headers')).toMatch(/content-type/i);
  });

  test('a reset whose JSON body has members is a 422 naming them, and resets nothing', async () => {
    await sut.api.delete('/users/4');
    const res = await sut.api.post('/__sandbox/reset', { keepUsers: true });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([expect.objectContaining({ path: '/keepUsers' })]);
    expect((await sut.api.get('/users/4')).status).toBe(404);
    expect((await sut.api.post('/__sandbox/reset', {})).status).toBe(204);
  });

  test('delay holds the answer back that many seconds, problems included', async () => {
    const user = await timed(`${sut.server.url}/users/2?delay=1`);
    expect(user.response.status).toBe(200);
    expect(user.ms).toBeGreaterThanOrEqual(990);
    const missing = await timed(`${sut.server.url}/users/999?delay=0.5`);
    expect(missing.response.status).toBe(404);
    expect(missing.ms).toBeGreaterThanOrEqual(490);
  });

  test.each([
    ['11', 'must be <= 10'],
    ['-1', 'must be >= 0'],
    ['soon', 'must be number'],
  ])('delay=%s is refused at once: %s', async (value, message) => {
    const { ms, response, body } = await timed(`${sut.server.url}/users/2?delay=${value}`);
    expect(response.status).toBe(400);
    expect(body.errors).toEqual([{ path: '/delay', message }]);
    expect(ms).toBeLessThan(1000);
  });

  test('Prefer answers without running the operation: a preferred 201 creates nobody', async () => {
    const res = await sut.api.post('/users', { firstName: 'No', lastName: 'Body', email: 'no@example.com' }, { headers: { Prefer: 'code=201' } });
    expect(res.status).toBe(201);
    expect(res.headers.get('preference-applied')).toBe('code=201, example=created');
    expect((await sut.api.get('/users')).body).toHaveLength(12);
  });

  test('Prefer without code or example (return=minimal) runs the operation', async () => {
    const res = await sut.api.get('/users/5', { headers: { Prefer: 'return=minimal' } });
    expect(res.body).toEqual(demoList[4]);
    expect(res.headers.get('preference-applied')).toBeNull();
  });

  test.each([
    ['code=418', 'asks for status 418, which this operation does not declare (it declares 200, 304, 400, 404, 408, 417, 421, 431, 500, 503)'],
    ['code=404, example=nobody', 'asks for example nobody, which status 404 does not have (it has notFound)'],
    ['example=nobody', 'asks for example nobody, which the success answer (200) does not have (it has tobias)'],
    // Prism looks for an example without a code among the success examples alone: so does the sandbox.
    ['example=invalidId', 'asks for example invalidId, which the success answer (200) does not have (it has tobias); ask for code=400, example=invalidId'],
  ])('Prefer: %s is refused, naming what there is', async (prefer, message) => {
    const res = await sut.api.get('/users/2', { headers: { Prefer: prefer } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ path: '/Prefer', message }]);
  });

  const answers = collectExamples().filter((example) => example.status !== 'request');
  test.each(answers.map((example) => [exampleLabel(example), example] as const))('Prefer answers %s exactly', async (_label, example) => {
    const [method, path] = example.where.split(' ') as [string, string];
    const res = await fetch(`${sut.server.url}${path.replace('{id}', '2')}`, {
      method,
      headers: { Prefer: `code=${example.status}, example=${example.name}` },
    });
    expect(res.status).toBe(Number(example.status));
    expect(res.headers.get('preference-applied')).toBe(`code=${example.status}, example=${example.name}`);
    expect(res.headers.get('content-type')).toBe(example.mediaType);
    const text = await res.text();
    expect(example.mediaType.startsWith('text/plain') ? text : JSON.parse(text)).toEqual(example.value);
  });

  test('Prefer: code=304 answers no body, with the ETag the contract shows', async () => {
    const res = await fetch(`${sut.server.url}/api/users/2`, { headers: { Prefer: 'code=304' } });
    expect(res.status).toBe(304);
    expect(res.headers.get('etag')).toBe('"1"');
  });

  test.each(['http://localhost:5173', 'http://127.0.0.1:3000', 'http://[::1]:8080', 'https://localhost'])(
    'admits the local development origin %s, and lets it read Link',
    async (origin) => {
      const preflight = await fetch(`${sut.server.url}/users`, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'POST' } });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe(origin);
      const list = await fetch(`${sut.server.url}/users?limit=2`, { headers: { Origin: origin } });
      expect(list.headers.get('access-control-expose-headers')).toMatch(/\bLink\b/);
    },
  );

  test.each(['https://app.example.com', 'http://localhost.example.com', 'http://10.0.0.5:3000'])('admits no other origin: %s', async (origin) => {
    const preflight = await fetch(`${sut.server.url}/users`, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'POST' } });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('SANDBOX_LATENCY_MS', () => {
  test('holds back every answer by a time drawn from its range; delay=0 replaces it', async () => {
    await withTestServer({ env: { ...SANDBOX, SANDBOX_LATENCY_MS: '600-700' } }, async (server) => {
      for (const path of ['/users/2', '/healthz', '/users/999']) {
        expect((await timed(`${server.url}${path}`)).ms).toBeGreaterThanOrEqual(590);
      }
      expect((await timed(`${server.url}/users/2?delay=0`)).ms).toBeLessThan(590);
    });
  });
});

test('a held answer ends when its client goes, rather than when its delay ends', async () => {
  await withTestServer({ env: SANDBOX }, async (server) => {
    const abandoned = new AbortController();
    const request = fetch(`${server.url}/users/2?delay=10`, { signal: abandoned.signal }).catch(() => 'aborted');
    await new Promise((resolve) => setTimeout(resolve, 300));
    abandoned.abort();
    expect(await request).toBe('aborted');
    // The request is measured once it ends: within seconds of the client going, not 10 s after it came.
    const measured = /http_request_duration_seconds_count\{operation_id="getUser"[^}]*\} 1/;
    const deadline = Date.now() + 5000;
    let metrics = '';
    while (!measured.test(metrics) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      metrics = await (await fetch(`${server.url}/metrics`)).text();
    }
    expect(metrics).toMatch(measured);
  });
});

test('a reset is no write: with a write limit, a client that reached it can still reset', async () => {
  await withTestServer({ env: { ...SANDBOX, RATE_LIMIT_WRITES_PER_MINUTE: '2' } }, async (_server, api) => {
    const statuses: number[] = [];
    for (let n = 0; n < 3; n++) statuses.push((await api.post('/users', { firstName: 'L', lastName: 'Imit', email: `limit-${n}@example.com` })).status);
    expect(statuses).toEqual([201, 201, 429]);
    expect((await api.post('/__sandbox/reset', {})).status).toBe(204);
    expect((await api.get('/users')).body).toHaveLength(12);
  });
});

test('a sandbox on a SQLite file keeps replies, and still answers Prefer from the contract rather than from a kept reply', () =>
  withTestServer({ env: { SANDBOX: 'true' } }, async (server, api) => {
    expect(server.store.sqliteFile).toBeDefined();
    const hits = async () => Number(/^http_kept_reply_lookups_total\{result="hit"\} (\d+)/m.exec((await api.get('/metrics')).text)?.[1] ?? 0);
    await api.get('/users/2');
    const before = await hits();
    expect((await api.get('/users/2')).status).toBe(200);
    expect(await hits()).toBe(before + 1);
    const preferred = await api.get('/users/2', { headers: { Prefer: 'code=404' } });
    expect(preferred.status).toBe(404);
    expect(preferred.headers.get('preference-applied')).toBe('code=404, example=notFound');
  }));
