import { createUserRecordsClient, pages } from '../../client/src/index.js';
import { startPrism, type PrismProcess } from '../support/prism.js';
import { describeScenarios } from './user-records.scenarios.js';

// The same scenarios against the Prism mock of the contract, as frontend teams run it (`make mock`):
// proof that the mock answers what the real server answers.

let prism: PrismProcess;
beforeAll(async () => {
  prism = await startPrism('mock');
});
afterAll(() => prism?.stop());

describeScenarios('mock', () => ({ baseUrl: prism.url, credentials: { username: 'admin', password: 'any' } }));

// docs/frontend.md, "Where Prism is not the server": each row is Prism's behaviour today, so that the table
// stays true when Prism changes (a row that fails here is a row to rewrite or drop).
describe('where Prism is not the server (docs/frontend.md)', () => {
  const basic = (password: string) => `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`;

  test('every page offers next, past the end too: paging until next is gone never ends', async () => {
    const res = await fetch(`${prism.url}/api/users?page=6`);
    await res.arrayBuffer();
    expect(res.headers.get('link')).toContain('rel="next"');
  });

  test("the client's pages() still ends: it stops at a next page it has read", async () => {
    const client = createUserRecordsClient({ baseUrl: prism.url });
    let read = 0;
    for await (const { items } of pages(client, '/api/users', { per_page: 6 })) {
      expect(items).toHaveLength(6);
      read++;
    }
    expect(read).toBe(2);
  });

  test('every create says Idempotent-Replayed: true, with no Idempotency-Key', async () => {
    const res = await fetch(`${prism.url}/users`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' }),
    });
    await res.arrayBuffer();
    expect(res.status).toBe(201);
    expect(res.headers.get('idempotent-replayed')).toBe('true');
  });

  test('Prefer: example= without code= looks among the success examples alone', async () => {
    const alone = await fetch(`${prism.url}/users/5`, { headers: { Prefer: 'example=invalidId' } });
    expect(alone.status).toBe(404);
    expect(await alone.json()).toMatchObject({ type: 'https://stoplight.io/prism/errors#NOT_FOUND' });
    const coded = await fetch(`${prism.url}/users/5`, { headers: { Prefer: 'code=400, example=invalidId' } });
    expect(coded.status).toBe(400);
    expect(await coded.json()).toMatchObject({ type: 'urn:user-records:problem:invalid-parameter', instance: '/users/abc' });
  });

  test("a body that is not JSON gets Prism's own 400", async () => {
    const res = await fetch(`${prism.url}/users`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { code: 'invalid_json', message: 'Invalid JSON' } });
  });

  test('any password is let in; one containing ":" is refused with the 401 example', async () => {
    const any = await fetch(`${prism.url}/protected-resource`, { headers: { Authorization: basic('wrong') } });
    await any.arrayBuffer();
    expect(any.status).toBe(200);
    const colon = await fetch(`${prism.url}/protected-resource`, { headers: { Authorization: basic('a:b') } });
    await colon.arrayBuffer();
    expect(colon.status).toBe(401);
  });

  test('OPTIONS without Origin is a 405', async () => {
    const res = await fetch(`${prism.url}/users`, { method: 'OPTIONS' });
    await res.arrayBuffer();
    expect(res.status).toBe(405);
  });
});
