import { buildUserInput } from '../support/builders.js';
import { httpClient } from '../support/http-client.js';
import { useTestServer, withTestServer } from '../support/test-server.js';

// What operators and browsers see on every response: request ids, security headers, CORS, health, metrics.

const FRONTEND = 'http://localhost:5173';
const sut = useTestServer({ env: { CORS_ORIGINS: `${FRONTEND},https://app.example.com` } });

describe('X-Request-Id', () => {
  test('a well-formed id from the client comes back', async () => {
    const res = await sut.api.get('/users/1', { headers: { 'x-request-id': 'checkout-42:a.b_c' } });
    expect(res.headers.get('x-request-id')).toBe('checkout-42:a.b_c');
  });

  test.each([
    ['none', {}],
    ['a malformed one', { 'x-request-id': 'has spaces and "quotes"' }],
    ['a too long one', { 'x-request-id': 'x'.repeat(129) }],
  ])('%s is replaced by a fresh UUID', async (_case, headers) => {
    const res = await sut.api.get('/users/1', { headers });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('security headers', () => {
  test.each([
    ['a success', 'GET', '/users/1'],
    ['a validation error', 'GET', '/users/abc'],
    ['an unknown route', 'GET', '/nope'],
    ['a wrong method', 'PATCH', '/users'],
    ['a 401', 'GET', '/protected-resource'],
  ])('are on %s', async (_case, method, path) => {
    const res = await sut.api.request(method, path);
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none';frame-ancestors 'none'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cross-origin-resource-policy')).toBe('same-origin');
    expect(res.headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-powered-by')).toBeNull();
    expect(res.headers.get('x-request-id')).not.toBeNull();
  });
});

test('the API reference page gets the headers of an HTML document, with a policy that lets it run', async () => {
  const res = await sut.api.request('GET', '/docs/', { unchecked: true });
  expect(res.status).toBe(200);
  const policy = res.headers.get('content-security-policy');
  expect(policy).toContain("script-src 'self'");
  // "Try it out" may call the servers the contract lists: the local server and the Prism mock (the sandbox is
  // in the sandbox variant's list, which a sandbox's /docs serves).
  expect(policy).toMatch(/connect-src 'self' http:\/\/127\.0\.0\.1:3000 http:\/\/127\.0\.0\.1:4010;/);
  expect(policy).toContain("frame-ancestors 'none'");
  expect(res.headers.get('cross-origin-opener-policy')).toBe('same-origin');
  expect(res.headers.get('x-frame-options')).toBe('DENY');
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
});

test('/docs is the page itself, as /docs/ is, its files named from the root (no redirect to follow)', async () => {
  const bare = await sut.api.request('GET', '/docs', { unchecked: true });
  const slashed = await sut.api.request('GET', '/docs/', { unchecked: true });
  expect(bare.status).toBe(200);
  expect(bare.text).toBe(slashed.text);
  expect(bare.text).toContain('<script src="/docs/swagger-ui-bundle.js"></script>');
  expect((await sut.api.request('GET', '/docs/docs.js', { unchecked: true })).text).toContain("url: '/docs/contract.json'");
});

test("the page's contract leaves out optional parameters' examples, which Try it out would send; /openapi.json keeps them for tools", async () => {
  const parameters = async (path: string) =>
    ((await sut.api.request('GET', path, { unchecked: true })).body as { components: { parameters: Record<string, { example?: unknown }> } }).components
      .parameters;
  const [shown, full] = [await parameters('/docs/contract.json'), await parameters('/openapi.json')];
  expect([full.IfMatch?.example, full.IfNoneMatch?.example, full.IdempotencyKey?.example]).toEqual(['"1"', '"1"', expect.any(String)]);
  expect([shown.IfMatch?.example, shown.IfNoneMatch?.example, shown.IdempotencyKey?.example]).toEqual([undefined, undefined, undefined]);
  expect(shown.UserId?.example).toBe(2);
});

test('the root leads to the API reference', async () => {
  const res = await fetch(`${sut.server.url}/`, { redirect: 'manual' });
  expect(res.status).toBe(302);
  expect(res.headers.get('location')).toBe('/docs');
});

test('a path the service does not have points to the API reference', async () => {
  const res = await sut.api.get('/nothing-here');
  expect(res.status).toBe(404);
  expect(res.body.detail).toBe('No route matches GET /nothing-here. The API reference is at /docs.');
});

describe('CORS', () => {
  test('a listed origin may read the response and its headers', async () => {
    const res = await sut.api.get('/users/1', { headers: { origin: FRONTEND } });
    expect(res.headers.get('access-control-allow-origin')).toBe(FRONTEND);
    expect(res.headers.get('access-control-expose-headers')).toContain('ETag');
    expect(res.headers.get('access-control-expose-headers')).toContain('X-Total-Count');
    expect(res.headers.get('vary')).toContain('Origin');
  });

  test('a preflight from a listed origin is answered 204 with what may be sent', async () => {
    const res = await sut.api.request('OPTIONS', '/users/1', {
      headers: { origin: FRONTEND, 'access-control-request-method': 'PUT', 'access-control-request-headers': 'content-type, if-match' },
      unchecked: true,
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(FRONTEND);
    expect(res.headers.get('access-control-allow-methods')).toContain('PUT');
    expect(res.headers.get('access-control-allow-headers')).toMatch(/If-Match/);
    expect(res.headers.get('access-control-allow-headers')).toMatch(/If-None-Match/);
    // A browser that traces its calls may continue its trace here.
    expect(res.headers.get('access-control-allow-headers')).toMatch(/traceparent/);
    expect(res.headers.get('access-control-allow-headers')).toMatch(/tracestate/);
    expect(res.headers.get('access-control-max-age')).toBe('600');
  });

  test('another origin gets no CORS headers, so its browser keeps the response from it', async () => {
    const res = await sut.api.get('/users/1', { headers: { origin: 'https://evil.example.net' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  test.each([
    ['without an Origin', {}],
    ['from another origin', { origin: 'https://evil.example.net' }],
  ])('a response %s still varies by Origin, so no cache hands it to a listed origin', async (_case, headers) => {
    const res = await sut.api.get('/users/1', { headers });
    expect(res.headers.get('vary')).toBe('Origin');
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('access-control-expose-headers')).toBeNull();
  });

  test('without CORS_ORIGINS no origin is allowed', () =>
    withTestServer({}, async (_server, api) => {
      const res = await api.get('/users/1', { headers: { origin: FRONTEND } });
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    }));
});

describe('health, readiness and metrics', () => {
  test('/healthz and /readyz answer while the store is up', async () => {
    expect((await sut.api.get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await sut.api.get('/readyz')).body).toEqual({ status: 'ready' });
  });

  test('/readyz is 503 when the store is down, while /healthz still answers', () =>
    withTestServer({}, async (server, api) => {
      await server.database.close();
      const ready = await api.get('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body.type).toBe('urn:user-records:problem:store-unavailable');
      expect((await api.get('/healthz')).status).toBe(200);
      const metrics = await api.get('/metrics');
      expect(metrics.text).toMatch(/^store_unavailable_total 1$/m);
    }));

  test('/metrics counts requests by operation and status, in the Prometheus text format', async () => {
    const api = httpClient(sut.server.url);
    await api.post('/users', buildUserInput());
    await api.get('/users/999999');
    const res = await api.get('/metrics');
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.text).toMatch(/^# TYPE http_request_duration_seconds histogram$/m);
    expect(res.text).toMatch(/^http_request_duration_seconds_count\{operation_id="createUser",method="POST",status="201"\} [1-9]\d*$/m);
    expect(res.text).toMatch(/^http_request_duration_seconds_count\{operation_id="getUser",method="GET",status="404"\} [1-9]\d*$/m);
    expect(res.text).toMatch(/^process_resident_memory_bytes \d+/m);
  });
});

describe('the API reference', () => {
  test.each(['constructor', '__proto__', 'toString', 'hasOwnProperty'])('/docs/%s, a name every object has, is an unknown file: 404', async (name) => {
    const res = await sut.api.get(`/docs/${name}`);
    expect(res.status).toBe(404);
    expect(res.body.type).toBe('urn:user-records:problem:not-found');
  });

  test.each([
    ['a host with a quote and markup', { 'x-forwarded-host': 'evil.example"><script>', 'x-forwarded-proto': 'https' }, 'https://127.0.0.1:PORT'],
    ['a scheme other than http(s)', { 'x-forwarded-host': 'api.example.com', 'x-forwarded-proto': 'javascript' }, 'http://api.example.com'],
    ['a host with a path', { 'x-forwarded-host': 'evil.example/phish' }, 'http://127.0.0.1:PORT'],
    ['a valid proxy view', { 'x-forwarded-host': 'api.example.com', 'x-forwarded-proto': 'https' }, 'https://api.example.com'],
  ])('/openapi.json behind a trusted proxy names this server from valid forwarded values only: %s', (_case, headers, expected) =>
    withTestServer({ env: { TRUST_PROXY: 'true' } }, async (server, api) => {
      const res = await api.get('/openapi.json', { headers, unchecked: true });
      expect(res.body.servers[0].url).toBe(expected.replace('PORT', String(server.port)));
    }),
  );
});
