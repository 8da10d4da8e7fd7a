import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { hashPassword } from '../../server/password-hash.js';
import { loadConfig, loadStoreConfig } from '../../server/config.js';
import { docBlocks } from '../support/doc-blocks.js';

// compose.yaml, as compose reads it: every instance's settings are ones the service accepts, and HAProxy gets
// every address deploy/haproxy.cfg asks for. (tests/system/compose.test.ts runs it with podman-compose.)

const read = (path: string) => readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), 'utf8');
interface Service {
  image: string;
  environment?: Record<string, string | null>;
  volumes?: string[];
  command?: string[];
  read_only?: boolean;
  security_opt?: string[];
  cap_drop?: string[];
  tmpfs?: string[];
}
const compose = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, Service> };
/** What the shell gives compose: the variables the README's commands export. */
const shell: Record<string, string> = { POSTGRES_PASSWORD: 'secret', APP_PASSWORD: 'another-secret' };
beforeAll(async () => {
  shell.BASIC_AUTH_PASSWORD_HASH = await hashPassword('compose-test');
});

/** A service's environment as compose passes it: ${NAME:?…} and ${NAME:-default} filled in, bare names from the shell. */
function environmentOf(service: Service): Record<string, string> {
  return Object.fromEntries(
    Object.entries(service.environment ?? {}).map(([name, value]) => [
      name,
      value === null
        ? shell[name]!
        : value.replace(
            /\$\{(\w+)(?::([?-])([^}]*))?\}/g,
            (_all, variable: string, kind?: string, rest?: string) => shell[variable] ?? (kind === '-' ? rest! : ''),
          ),
    ]),
  );
}

test('both instances run the image make image builds, with settings the service accepts', () => {
  for (const name of ['app1', 'app2']) {
    const service = compose.services[name]!;
    expect(service.image).toBe('localhost/user-records-service:latest');
    const config = loadConfig(environmentOf(service));
    expect(config.database).toMatchObject({ kind: 'postgres', poolMode: 'session' });
    expect(config).toMatchObject({
      trustProxy: 1,
      migrateAtStart: false,
      sharedLimits: { redisUrl: 'redis://redis:6379' },
      basicAuth: { username: 'admin', secret: { kind: 'hash' } },
    });
  }
});

/** Where a PostgreSQL DATABASE_URL points, and as whom. */
const target = (url: string) => {
  const { host, pathname, username, password } = new URL(url);
  return { where: `${host}${pathname}`, username, password };
};

test("the migration runs the image's migrate tool on the same database as the schema's owner; the instances connect as deploy/postgres-roles.sh's role", () => {
  const migrate = compose.services.migrate!;
  expect(migrate.command).toEqual(['node', 'dist/server/tools/migrate.js']);
  const postgres = environmentOf(compose.services.postgres!);
  const migrating = loadStoreConfig(environmentOf(migrate)).database;
  const serving = loadConfig(environmentOf(compose.services.app1!)).database;
  if (migrating.kind !== 'postgres' || serving.kind !== 'postgres') throw new Error('compose.yaml runs on PostgreSQL');
  expect(target(migrating.url)).toEqual({
    where: `postgres:5432/${postgres.POSTGRES_DB}`,
    username: postgres.POSTGRES_USER,
    password: shell.POSTGRES_PASSWORD,
  });
  const role = /: "\$\{APP_ROLE:=(\w+)\}"/.exec(read('deploy/postgres-roles.sh'))![1];
  expect(target(serving.url)).toEqual({ where: `postgres:5432/${postgres.POSTGRES_DB}`, username: role, password: shell.APP_PASSWORD });
  expect(postgres.APP_PASSWORD).toBe(shell.APP_PASSWORD);
  expect(compose.services.postgres!.volumes).toContain('./deploy/postgres-roles.sh:/docker-entrypoint-initdb.d/postgres-roles.sh:ro');
});

test('every container of the image gains and holds no privilege, writes nothing to its root, and leaves no volume behind', () => {
  for (const name of ['app1', 'app2', 'migrate']) {
    expect({ name, ...compose.services[name] }).toMatchObject({
      name,
      read_only: true,
      security_opt: ['no-new-privileges:true'],
      cap_drop: ['ALL'],
      tmpfs: ['/data'],
    });
  }
});

/** The variables deploy/haproxy.cfg reads, with the default it gives each (undefined: none). */
const proxyVariables = new Map([...read('deploy/haproxy.cfg').matchAll(/\$\{(\w+)(?:-([^}]*))?\}/g)].map(([, name, fallback]) => [name!, fallback]));

test('HAProxy runs deploy/haproxy.cfg and gets every variable it names', () => {
  const haproxy = compose.services.haproxy!;
  expect(haproxy.volumes).toContain('./deploy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro');
  expect(Object.keys(environmentOf(haproxy)).sort()).toEqual([...proxyVariables.keys()].sort());
  expect(environmentOf(haproxy)).toMatchObject({ APP1: 'app1:3000', APP2: 'app2:3000' });
  // The runtime API's socket is on the volume deploy/rolling-restart.sh reaches it through.
  expect(haproxy.volumes).toContain('haproxy-admin:/var/lib/haproxy');
  expect(environmentOf(haproxy).STATS_SOCKET).toBe('/var/lib/haproxy/admin.sock');
  expect(read('deploy/rolling-restart.sh')).toMatch(/\$\{PROJECT\}_haproxy-admin/);
  expect(read('deploy/rolling-restart.sh')).toContain('socket=$volume/admin.sock');
});

test("HAProxy limits a client's connections with the numbers the service uses alone, which TRUST_PROXY turns off there", () => {
  const alone = loadConfig(environmentOf(compose.services.app1!));
  const numbers = { MAX_CONNECTIONS_PER_CLIENT: String(alone.maxConnectionsPerClient), HEADERS_TIMEOUT_MS: String(alone.timeouts.headersMs) };
  expect(Object.fromEntries([...proxyVariables].filter(([, fallback]) => fallback !== undefined))).toEqual(numbers);
  expect(environmentOf(compose.services.haproxy!)).toMatchObject(numbers);
});

test("compose.yaml's header gives docs/deployment.md's commands, which tests/system/compose.test.ts runs", () => {
  /** Each command on a line of its own (continuations joined), without its comment. */
  const commands = (text: string) =>
    text
      .replace(/\s*\\\n\s*/g, ' ')
      .split('\n')
      .map((line) => line.replace(/\s+# .*$/, '').trim())
      .filter(Boolean);
  const lines = read('compose.yaml').split('\n');
  const header = lines.slice(lines.findIndex((line) => line.endsWith('Then:')) + 1);
  const given = commands(
    header
      .slice(
        0,
        header.findIndex((line) => !line.startsWith('#   ')),
      )
      .map((line) => line.slice(4))
      .join('\n'),
  );
  const page = docBlocks('docs/deployment.md').find((block) => block.label === 'compose-up')!;
  expect(given).toEqual(commands(page.text).filter((command) => !command.startsWith('make ')));
});
