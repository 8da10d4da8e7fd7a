import { contractViolation, findOperationId } from '../support/contract-check.js';
import { withTestServer } from '../support/test-server.js';
import { requestFrom, type AddressedRequest } from '../support/request-from.js';

// Creates, replaces and deletes are limited per client, so that no anonymous client can fill the store;
// reads and other clients are unaffected. Every counted write carries the IETF RateLimit fields; refusals
// carry Retry-After too.

const env = { RATE_LIMIT_WRITES_PER_MINUTE: '5', CORS_ORIGINS: 'https://app.example.com' };
const user = { firstName: 'Rate', lastName: 'Limited', email: 'rate.limited@example.com' };

/** A request from a chosen address whose response must be one the contract allows. */
async function checked(base: string, path: string, request: AddressedRequest) {
  const response = await requestFrom(`${base}${path}`, request);
  const body = response.body === '' ? undefined : response.body;
  const violation = contractViolation(findOperationId(request.method ?? 'GET', path), { status: response.status, contentType: response.contentType, body });
  if (violation) throw new Error(`${request.method} ${path} → ${response.status} breaks the contract: ${violation}`);
  return response;
}

test('a client gets 429 with Retry-After and RateLimit fields past its writes per minute; reads and other clients go on', () =>
  withTestServer({ env: { ...env, SEED_DEMO_DATA: 'false' } }, async (server) => {
    const from = '127.0.0.2';
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await checked(server.url, '/users', { from, method: 'POST', json: user }));
    expect(created.map((res) => res.status)).toEqual([201, 201, 201, 201, 201]);
    const refused = await checked(server.url, '/users', { from, method: 'POST', json: user, headers: { origin: 'https://app.example.com' } });
    expect(refused.status).toBe(429);
    expect(refused.body.type).toBe('urn:user-records:problem:too-many-writes');
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers['ratelimit-policy']).toBe('"writes";q=5;w=60');
    expect(refused.headers.ratelimit).toBe(`"writes";r=0;t=${retryAfter}`);
    // A browser app may read them.
    expect(String(refused.headers['access-control-expose-headers'])).toMatch(/RateLimit-Policy/);
    // Every write operation of both shapes counts against the same limit.
    const id = created[0]!.body.id as number;
    expect((await checked(server.url, `/users/${id}`, { from, method: 'PUT', json: user })).status).toBe(429);
    expect((await checked(server.url, `/users/${id}`, { from, method: 'DELETE' })).status).toBe(429);
    expect((await checked(server.url, '/api/users', { from, method: 'POST', json: { name: 'A B', email: 'a@example.com' } })).status).toBe(429);
    // Reads from the limited client, and writes from another, go on; the store holds only what was allowed.
    const list = await checked(server.url, '/users', { from });
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(5);
    expect((await checked(server.url, '/users', { from: '127.0.0.3', method: 'POST', json: user })).status).toBe(201);
  }));

test('every counted write answers with its budget, problems too, so a client can pace itself; reads do not count', () =>
  withTestServer({ env: { ...env, SEED_DEMO_DATA: 'false' } }, async (server) => {
    const from = '127.0.0.6';
    const budgets: string[] = [];
    const write = async (path: string, request: Omit<AddressedRequest, 'from'>, status: number) => {
      const response = await checked(server.url, path, { from, ...request });
      expect(response.status).toBe(status);
      expect(response.headers['ratelimit-policy']).toBe('"writes";q=5;w=60');
      const budget = /^"writes";r=(\d);t=(\d+)$/.exec(String(response.headers.ratelimit));
      expect(budget).not.toBeNull();
      expect(Number(budget![2])).toBeGreaterThanOrEqual(1);
      expect(Number(budget![2])).toBeLessThanOrEqual(60);
      budgets.push(budget![1]!);
      return response;
    };
    const created = await write('/users', { method: 'POST', json: user }, 201);
    await write('/users/abc', { method: 'PUT', json: user }, 400);
    await write('/users/999', { method: 'DELETE' }, 404);
    await write('/api/users', { method: 'POST', json: 'name=A', headers: { 'content-type': 'text/plain' } }, 415);
    // Reads neither count nor say so.
    const read = await checked(server.url, `/users/${created.body.id}`, { from });
    expect(read.status).toBe(200);
    expect(read.headers.ratelimit).toBeUndefined();
    expect(read.headers['ratelimit-policy']).toBeUndefined();
    await write('/users', { method: 'POST', json: { firstName: '' } }, 422);
    expect(budgets).toEqual(['4', '3', '2', '1', '0']);
    // A browser app may read the budget of an answer that succeeded, not only of a refusal.
    const seen = await checked(server.url, `/users/${created.body.id}`, {
      from: '127.0.0.7',
      method: 'DELETE',
      headers: { origin: 'https://app.example.com' },
    });
    expect(seen.status).toBe(204);
    expect(String(seen.headers['access-control-expose-headers'])).toMatch(/\bRateLimit\b/);
  }));

test('the refusal is counted, and RATE_LIMIT_WRITES_PER_MINUTE=0 disables the limit', async () => {
  await withTestServer({ env: { RATE_LIMIT_WRITES_PER_MINUTE: '1' } }, async (server) => {
    for (let i = 0; i < 3; i++) await requestFrom(`${server.url}/users`, { from: '127.0.0.4', method: 'POST', json: user });
    const metrics = await requestFrom(`${server.url}/metrics`, { from: '127.0.0.1' });
    expect(metrics.body).toMatch(/^rate_limited_total\{limit="writes"\} 2$/m);
  });
  await withTestServer({ env: { RATE_LIMIT_WRITES_PER_MINUTE: '0' } }, async (server) => {
    const answers = [];
    for (let i = 0; i < 20; i++) answers.push(await requestFrom(`${server.url}/users`, { from: '127.0.0.5', method: 'POST', json: user }));
    expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([201]));
    // No limit, no budget to announce.
    expect(answers.filter((answer) => 'ratelimit' in answer.headers || 'ratelimit-policy' in answer.headers)).toEqual([]);
  });
});
