import { execFileSync } from 'node:child_process';
import { buildUserInput } from '../support/builders.js';
import { httpClient, type HttpClient } from '../support/http-client.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { createTestStore, describeEachDialect, type TestStore } from '../support/test-store.js';

// Stateless instances on one store: separate server processes, started at once on an empty store.

describeEachDialect((dialect) => {
  let store: TestStore;
  let instances: ServerProcess[];
  let clients: HttpClient[];

  beforeAll(async () => {
    store = await createTestStore(dialect);
    instances = await Promise.all([startServerProcess(store), startServerProcess(store)]);
    clients = instances.map((instance) => httpClient(instance.url));
  });
  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.stop()));
    await store.drop();
  });

  test('two instances starting at once on an empty store migrate it and seed it once', async () => {
    const [a, b] = clients as [HttpClient, HttpClient];
    expect((await a.get('/users')).body.filter((u: { id: number; email: string }) => u.email.endsWith('@example.com') && u.id <= 12)).toHaveLength(12);
    expect((await b.get('/api/users')).body.total).toBeGreaterThanOrEqual(12);
    expect((await a.get('/users/13')).status).toBe(404);
  });

  test('a write through one instance is read at once through the other', async () => {
    const [a, b] = clients as [HttpClient, HttpClient];
    const created = await a.post('/users', buildUserInput());
    expect((await b.get(`/users/${created.body.id}`)).body).toEqual(created.body);
    const replaced = await b.put(`/users/${created.body.id}`, buildUserInput({ firstName: 'FromB' }), { headers: { 'if-match': '"1"' } });
    expect((await a.get(`/users/${created.body.id}`)).body).toEqual(replaced.body);
    expect((await a.put(`/users/${created.body.id}`, buildUserInput(), { headers: { 'if-match': '"1"' } })).status).toBe(412);
    expect((await a.delete(`/users/${created.body.id}`)).status).toBe(204);
    expect((await b.get(`/users/${created.body.id}`)).status).toBe(404);
  });

  test('concurrent creates through both instances get distinct ids, and every row is there', async () => {
    const inputs = Array.from({ length: 300 }, () => buildUserInput());
    const responses = await Promise.all(inputs.map((input, i) => clients[i % 2]!.post('/users', input)));
    expect(responses.every((r) => r.status === 201)).toBe(true);
    const ids = responses.map((r) => r.body.id as number);
    expect(new Set(ids).size).toBe(300);
    const listed = new Map<number, string>((await clients[1]!.get('/users')).body.map((u: { id: number; email: string }) => [u.id, u.email]));
    for (const [i, id] of ids.entries()) expect(listed.get(id)).toBe(inputs[i]!.email);
  });

  test('the same idempotency key through both instances creates one user', async () => {
    const input = buildUserInput();
    const headers = { 'idempotency-key': `both-instances-${dialect}-${Date.now()}` };
    const send = async (client: HttpClient): Promise<number> => {
      for (;;) {
        const res = await client.post('/users', input, { headers });
        if (res.status === 201) return res.body.id;
        expect(res.status).toBe(409);
      }
    };
    const ids = await Promise.all([send(clients[0]!), send(clients[1]!), send(clients[0]!), send(clients[1]!)]);
    expect(new Set(ids).size).toBe(1);
  });
});

const workersOf = (pid: number) =>
  execFileSync('ps', ['--ppid', String(pid), '-o', 'pid='])
    .toString()
    .trim()
    .split(/\s+/);

test('WORKERS=2 runs two worker processes behind one port, replaces one that dies, and SIGTERM stops all with exit 0', async () => {
  const store = await createTestStore('sqlite');
  const server = await startServerProcess(store, { WORKERS: '2' });
  try {
    const [first = '', second = ''] = workersOf(server.pid);
    process.kill(Number(first), 'SIGKILL');
    for (let tries = 0; tries < 100 && !server.output().match(/"msg":"user records service listening"/g)?.[2]; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const workers = workersOf(server.pid);
    expect(workers).toHaveLength(2);
    expect(workers).toContain(second);
    expect(workers).not.toContain(first);
    // The primary says which worker died, under a key of its own: the line's `pid` is the primary's.
    const died = server
      .output()
      .split('\n')
      .find((line) => line.includes('"msg":"worker died; starting another"'))!;
    expect(died.match(/"pid":/g)).toHaveLength(1);
    expect(JSON.parse(died)).toMatchObject({ pid: server.pid, workerPid: Number(first), signal: 'SIGKILL' });
    const api = httpClient(server.url);
    const responses = await Promise.all(Array.from({ length: 100 }, () => api.post('/users', buildUserInput())));
    expect(new Set(responses.map((r) => r.body.id)).size).toBe(100);
    expect(await server.stop('SIGTERM')).toBe(0);
    for (const pid of workers) expect(() => process.kill(Number(pid), 0)).toThrow();
  } finally {
    await server.stop('SIGKILL');
    await store.drop();
  }
});
