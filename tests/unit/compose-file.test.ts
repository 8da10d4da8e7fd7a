import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { hashPassword } from '../../server/password-hash.js';
import { loadConfig, loadStoreConfig } from '../../server/config.js';

// compose.yaml, as compose reads it: every instance's settings are ones the service accepts, and HAProxy gets
// every address deploy/haproxy.cfg asks for. (Its images come from registries this project's machines cannot
// reach; tests/system/topology.test.ts runs the same HAProxy file in front of instances with these settings.)

const read = (path: string) => readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), 'utf8');
interface Service {
  image: string;
  environment?: Record<string, string | null>;
  volumes?: string[];
  command?: string[];
}
const compose = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, Service> };
/** What the shell gives compose: the variables the README's commands export. */
const shell: Record<string, string> = { POSTGRES_PASSWORD: 'secret' };
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

test("the migration runs the image's migrate tool on the same database, with nothing but its settings", () => {
  const migrate = compose.services.migrate!;
  expect(migrate.command).toEqual(['node', 'dist/server/tools/migrate.js']);
  expect(loadStoreConfig(environmentOf(migrate)).database).toEqual(loadConfig(environmentOf(compose.services.app1!)).database);
});

/** The variables deploy/haproxy.cfg reads, with the default it gives each (undefined: none). */
const proxyVariables = new Map([...read('deploy/haproxy.cfg').matchAll(/\$\{(\w+)(?:-([^}]*))?\}/g)].map(([, name, fallback]) => [name!, fallback]));

test('HAProxy runs deploy/haproxy.cfg and gets every variable it names', () => {
  const haproxy = compose.services.haproxy!;
  expect(haproxy.volumes).toContain('./deploy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro');
  expect(Object.keys(environmentOf(haproxy)).sort()).toEqual([...proxyVariables.keys()].sort());
  expect(environmentOf(haproxy)).toMatchObject({ APP1: 'app1:3000', APP2: 'app2:3000' });
});

test("HAProxy limits a client's connections with the numbers the service uses alone, which TRUST_PROXY turns off there", () => {
  const alone = loadConfig(environmentOf(compose.services.app1!));
  const numbers = { MAX_CONNECTIONS_PER_CLIENT: String(alone.maxConnectionsPerClient), HEADERS_TIMEOUT_MS: String(alone.timeouts.headersMs) };
  expect(Object.fromEntries([...proxyVariables].filter(([, fallback]) => fallback !== undefined))).toEqual(numbers);
  expect(environmentOf(compose.services.haproxy!)).toMatchObject(numbers);
});
