import { createServer, type AddressInfo } from 'node:net';
import { launchServerProcess, runServerToExit } from '../support/server-process.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { createTestStore, postgresAvailable, type TestStore } from '../support/test-store.js';

// What a person starting the service sees when it cannot start: one line that names what to change, as for a
// configuration error, and no stack; and a database that is not up yet is waited for, within a bound.

const RETRY_LINE = '"msg":"the store does not answer yet; trying again"';

let store: TestStore;
beforeAll(async () => {
  store = await createTestStore('sqlite');
});
afterAll(() => store.drop());

/** Lines that are not JSON log lines: what a person reads on the terminal. */
const plainLines = (output: string) => output.split('\n').filter((line) => line !== '' && !line.startsWith('{'));

test('a port in use: one line that names PORT, no stack, exit 1', async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const port = (taken.address() as AddressInfo).port;
  try {
    const { code, output } = await runServerToExit(store, { PORT: String(port), LOG_LEVEL: 'info' }, 30_000);
    expect(code).toBe(1);
    expect(plainLines(output)).toEqual([
      `Could not start: port ${port} on 127.0.0.1 is in use. Set PORT to a free port (make run PORT=3001), or stop what listens there.`,
    ]);
    expect(output).not.toContain('"level":60');
  } finally {
    taken.close();
  }
}, 60_000);

test('a database that never answers: a line per try, then one line that names DATABASE_URL and the bound, exit 1', async () => {
  // A port nothing listens on: every connection is refused.
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const { code, output } = await runServerToExit(
    store,
    { DATABASE_URL: `postgres://nobody@127.0.0.1:${port}/test`, DATABASE_START_TIMEOUT_MS: '2000', LOG_LEVEL: 'info' },
    30_000,
  );
  expect(code).toBe(1);
  // Tries at 0, 0.5 and 1.5 s, and one at the bound (2 s).
  expect(output.split('\n').filter((line) => line.includes(RETRY_LINE)).length).toBeGreaterThanOrEqual(2);
  const [line, ...others] = plainLines(output);
  expect(others).toEqual([]);
  expect(line).toMatch(
    /^Could not start: the store did not answer within 2 s \(ECONNREFUSED: .*\)\. Check DATABASE_URL and that the database runs, or wait longer with DATABASE_START_TIMEOUT_MS\.$/,
  );
}, 60_000);

(postgresAvailable ? test : test.skip)(
  'PostgreSQL that comes up after the service: it is waited for, and the service starts',
  async () => {
    const postgres = await createTestStore('postgres');
    const target = new URL(postgres.url);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    await proxy.setMode('refuse');
    try {
      const launched = launchServerProcess(postgres, { DATABASE_URL: proxy.via(postgres.url), LOG_LEVEL: 'info' });
      // The database "comes up" once the service has said it was refused and will try again.
      for (let tries = 0; tries < 600 && !launched.output().includes(RETRY_LINE); tries++) await new Promise((resolve) => setTimeout(resolve, 50));
      await proxy.setMode('pass');
      const server = await launched.started;
      try {
        expect(server.output()).toContain(RETRY_LINE);
        expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      } finally {
        await server.stop();
      }
    } finally {
      await proxy.close();
      await postgres.drop();
    }
  },
  60_000,
);

(postgresAvailable ? describe : describe.skip)('a PostgreSQL server that has no such database or role', () => {
  const upstream = new URL(process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
  test.each([
    ['database', Object.assign(new URL(upstream), { pathname: '/user_records_never_made' }), 'database "user_records_never_made" does not exist'],
    ['role', Object.assign(new URL(upstream), { username: 'user_records_never_made' }), 'role "user_records_never_made" does not exist'],
  ])(
    'no such %s: one line naming it, no stack, exit 1; npm run migrate says the same',
    async (_kind, url, says) => {
      const missing: TestStore = { dialect: 'postgres', url: url.toString(), drop: async () => undefined };
      const { code, output } = await runServerToExit(missing, { LOG_LEVEL: 'info' }, 30_000);
      expect(code).toBe(1);
      const line = `the database server says ${says}. Fix DATABASE_URL, or create what it names on that server.`;
      expect(plainLines(output)).toEqual([`Could not start: ${line}`]);
      expect(output).not.toContain('"level":60');
      const migrate = await runServerToExit(missing, { LOG_LEVEL: 'info' }, 30_000, 'dist/server/tools/migrate.js');
      expect(migrate.code).toBe(1);
      expect(plainLines(migrate.output)).toEqual([`Could not migrate: ${line}`]);
    },
    60_000,
  );
});
