import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildUserInput } from '../support/builders.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { TEST_CREDENTIALS } from '../support/test-server.js';
import { postgresQuery, postgresSuperuserAvailable } from '../support/test-store.js';

// compose.yaml's roles (deploy/postgres-roles.sh, run by PostgreSQL's image when its data folder is new): the
// migrations run as the schema's owner, and the instances connect as a role that reads and writes rows and
// cannot change the schema. Here the script runs as the image runs it, on a database of its own.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const upstream = new URL(process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test');

(postgresSuperuserAvailable ? describe : describe.skip)("compose.yaml's database roles", () => {
  const suffix = randomBytes(4).toString('hex');
  const database = `user_records_roles_${suffix}`;
  const app = `user_records_app_${suffix}`;
  const urlAs = (user: string, password?: string) =>
    Object.assign(new URL(upstream), { pathname: `/${database}`, username: user, password: password ?? '' }).toString();
  let server: ServerProcess | undefined;
  afterAll(async () => {
    await server?.stop();
    await postgresQuery(`drop database if exists ${database} with (force)`);
    await postgresQuery(`drop role if exists ${app}`);
  });

  test('the instances serve as a role that reads and writes rows, and cannot change the schema', async () => {
    await postgresQuery(`create database ${database}`);
    await run('sh', ['deploy/postgres-roles.sh'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        PGHOST: upstream.hostname,
        PGPORT: upstream.port || '5432',
        POSTGRES_USER: upstream.username,
        POSTGRES_DB: database,
        APP_ROLE: app,
        APP_PASSWORD: 'an app password',
      },
    });
    // The migrations, as compose's migrate step runs them: as the owner.
    await run(process.execPath, ['dist/server/tools/migrate.js'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', DATABASE_URL: urlAs(upstream.username) } });

    server = await startServerProcess({ dialect: 'postgres', url: urlAs(app, 'an app password'), drop: async () => undefined }, { MIGRATE_AT_START: 'false' });
    const json = { 'Content-Type': 'application/json' };
    const created = await fetch(`${server.url}/users`, { method: 'POST', headers: json, body: JSON.stringify(buildUserInput({ lastName: 'Rolesearch' })) });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    expect((await fetch(`${server.url}/users/${id}`, { method: 'PUT', headers: json, body: JSON.stringify(buildUserInput()) })).status).toBe(200);
    expect((await fetch(`${server.url}/users?q=rolesearch`)).status).toBe(200);
    const wrong = `Basic ${Buffer.from(`${TEST_CREDENTIALS.username}:wrong`).toString('base64')}`;
    expect((await fetch(`${server.url}/protected-resource`, { headers: { Authorization: wrong } })).status).toBe(401);
    expect((await fetch(`${server.url}/users/${id}`, { method: 'DELETE' })).status).toBe(204);

    const asApp = (sql: string) => postgresQuery(sql, [], urlAs(app, 'an app password'));
    await expect(asApp('create table intruder (a int)')).rejects.toThrow(/permission denied for schema public/);
    await expect(asApp('drop table users')).rejects.toThrow(/must be owner of table users/);
    await expect(asApp('alter table users add column intruder text')).rejects.toThrow(/must be owner of table users/);
  }, 60_000);
});
