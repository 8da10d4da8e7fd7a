import { DEMO_USERS } from '../../server/db/demo-data.js';
import { buildDemoUserInput, buildUserInput } from '../support/builders.js';
import { httpClient } from '../support/http-client.js';
import { storedCount, storedUser } from '../support/stored.js';
import { startTestServer, withTestServer } from '../support/test-server.js';
import { describeEachDialect } from '../support/test-store.js';

describeEachDialect((dialect) => {
  describe('demo data', () => {
    test('a fresh store gets the 12 demo users, ids 1 to 12', () =>
      withTestServer({ dialect }, async (_server, api) => {
        const res = await api.get('/users');
        expect(res.body).toEqual(DEMO_USERS.map((user, index) => ({ id: index + 1, ...user })));
        expect(res.body.every((u: { email: string }) => u.email.endsWith('@example.com'))).toBe(true);
      }));

    test('SEED_DEMO_DATA=false leaves the store empty', () =>
      withTestServer({ dialect, env: { SEED_DEMO_DATA: 'false' } }, async (_server, api) => {
        expect((await api.get('/users')).body).toEqual([]);
        expect((await api.get('/api/users')).body).toEqual({ page: 1, per_page: 6, total: 0, total_pages: 0, data: [] });
      }));

    test('demo users an operator deleted do not come back on restart', async () => {
      const first = await startTestServer({ dialect });
      const api = httpClient(first.url);
      for (let id = 1; id <= 12; id++) expect((await api.delete(`/users/${id}`)).status).toBe(204);
      await first.stop();
      const second = await startTestServer({ store: first.store });
      try {
        expect(await storedCount(second)).toBe(0);
      } finally {
        await second.cleanup();
      }
    });
  });

  test('what a client was told is stored survives a restart on the same store', async () => {
    const first = await startTestServer({ dialect });
    const api = httpClient(first.url);
    const a = await api.post('/api/users', buildDemoUserInput({ name: 'Persisted Person' }));
    const b = await api.post('/users', buildUserInput());
    const replaced = await api.put(`/users/${b.body.id}`, buildUserInput({ firstName: 'Replaced' }));
    expect((await api.delete('/users/3')).status).toBe(204);
    await first.stop();

    const second = await startTestServer({ store: first.store });
    try {
      const again = httpClient(second.url);
      expect((await again.get(`/api/users/${a.body.id}`)).body.data).toMatchObject({ first_name: 'Persisted', last_name: 'Person' });
      expect((await again.get(`/users/${b.body.id}`)).body).toEqual(replaced.body);
      expect((await again.get('/users/3')).status).toBe(404);
      expect(await storedCount(second)).toBe(12 - 1 + 2);
      const c = await again.post('/users', buildUserInput());
      expect(c.body.id).toBeGreaterThan(b.body.id);
    } finally {
      await second.cleanup();
    }
  });

  test('200 concurrent creates all land, with distinct ids', () =>
    withTestServer({ dialect, env: { SEED_DEMO_DATA: 'false' } }, async (server, api) => {
      const inputs = Array.from({ length: 200 }, (_, i) => (i % 2 ? buildUserInput() : buildDemoUserInput()));
      const responses = await Promise.all(inputs.map((input, i) => api.post(i % 2 ? '/users' : '/api/users', input)));
      expect(responses.map((r) => r.status)).toEqual(Array(200).fill(201));
      const ids = responses.map((r) => r.body.id as number);
      expect(new Set(ids).size).toBe(200);
      expect(await storedCount(server)).toBe(200);
      for (const [i, id] of ids.entries()) {
        expect((await storedUser(server, id))?.email).toBe(inputs[i]!.email);
      }
    }));
});
