import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { buildUserInput } from '../support/builders.js';
import { createTestStore, postgresSuperuserAvailable, type TestStore } from '../support/test-store.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

// PostgreSQL turns read-only under the service, as a standby does after a failover: reads and `select 1`
// still work, writes fail with 25006. Writes must be 503 problems, and /readyz must say what a request would
// meet (not ready) without writing anything itself, then be ready again once a write succeeds.

// Makes a role of its own, which needs a superuser.
const describePostgres = postgresSuperuserAvailable ? describe : describe.skip;

describePostgres('readiness follows failing writes', () => {
  const role = `readonly_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: process.env.TEST_POSTGRES_URL });
  let store: TestStore;
  let server: TestServer | undefined;

  /** Sets the role's sessions read-only (or back), and ends its sessions so that new ones take the setting. */
  async function readOnly(on: boolean): Promise<void> {
    await admin.query(on ? `alter role ${role} set default_transaction_read_only = on` : `alter role ${role} reset default_transaction_read_only`);
    await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where usename = $1', [role]);
  }

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`create role ${role} login superuser`);
    store = await createTestStore('postgres');
    const url = new URL(store.url);
    url.username = role;
    server = await startTestServer({ store: { ...store, url: url.toString() } });
  });

  afterAll(async () => {
    await server?.stop();
    await store?.drop();
    await admin.query(`drop role if exists ${role}`);
    await admin.end();
  });

  const post = () => fetch(`${server!.url}/users`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(buildUserInput()) });

  test('a read-only store: writes 503, reads 200, /readyz 503 until a write succeeds again', async () => {
    expect((await fetch(`${server!.url}/readyz`)).status).toBe(200);
    await readOnly(true);
    // The first request may meet a connection that was just ended (57P01): a 503 as well.
    const writes = [await post(), await post()];
    expect(writes.map((response) => response.status)).toEqual([503, 503]);
    expect(writes[1]!.headers.get('content-type')).toBe('application/problem+json');
    expect((await fetch(`${server!.url}/users/1`)).status).toBe(200);
    expect((await fetch(`${server!.url}/readyz`)).status).toBe(503);

    await readOnly(false);
    const healed = [await post(), await post()].map((response) => response.status);
    expect(healed[1]).toBe(201);
    expect((await fetch(`${server!.url}/readyz`)).status).toBe(200);
  });
});
