import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describeScenarios } from '../scenarios/user-records.scenarios.js';
import { buildUserInput } from '../support/builders.js';
import { loggedRequests, logEntries, startIdentifiedLoad } from '../support/identified-load.js';
import { parsePasswordHash, verifyPassword } from '../../server/password-hash.js';
import { docBlock } from '../support/doc-blocks.js';
import { freePort } from '../support/ports.js';
import { hashPassword } from '../../server/password-hash.js';
import { BASE_IMAGE, buildImage, describeWithPodman, IMAGE, podman, podmanWithInput, startContainer, type Container } from '../support/podman.js';

// The container image as operators run it (make image, then podman run): the acceptance scenarios on a SQLite
// volume with a read-only root, data kept across containers, podman stop draining in-flight requests, and an
// image that holds only what runs, as an unprivileged user.

const credentials = { username: 'admin', password: 'container-test-pass' };
const volumes: string[] = [];
const containers: string[] = [];

async function newVolume(): Promise<string> {
  const name = `user-records-test-${process.pid}-${volumes.length}`;
  await podman('volume', 'create', name);
  volumes.push(name);
  return name;
}
async function start(options: Parameters<typeof startContainer>[0]): Promise<Container> {
  const container = await startContainer(options);
  containers.push(container.id);
  return container;
}
const inspect = (id: string, format: string) => podman('inspect', id, '--format', format);
/** What a shell script prints in a new container of the image, removed after. */
const inImage = (script: string) => podman('run', '--rm', '--entrypoint', 'sh', IMAGE, '-c', script);

describeWithPodman('the container image', () => {
  beforeAll(() => buildImage(), 600_000);
  afterAll(async () => {
    for (const id of containers) await podman('rm', '-f', id).catch(() => undefined);
    for (const name of volumes) await podman('volume', 'rm', '-f', name).catch(() => undefined);
  }, 60_000);

  test('adds at most 150 MB to its base, and holds no sources, compiler, dev dependencies or build secrets', async () => {
    const added =
      Number(await podman('image', 'inspect', IMAGE, '--format', '{{.Size}}')) - Number(await podman('image', 'inspect', BASE_IMAGE, '--format', '{{.Size}}'));
    console.log(`the image adds ${(added / 1e6).toFixed(1)} MB to ${BASE_IMAGE}`);
    expect(added).toBeLessThanOrEqual(150e6);
    const listing = await inImage('ls /app /app/node_modules /app/node_modules/.bin; find /app -name "*.ts" ! -name "*.d.ts" -not -path "*/node_modules/*"');
    const names = listing.split(/\s+/);
    expect(names).toEqual(expect.arrayContaining(['dist', 'node_modules', 'package.json', 'koa', 'better-sqlite3']));
    for (const absent of [
      'server',
      'tests',
      'openapi',
      'generated',
      'typescript',
      '@types',
      'esbuild',
      '@esbuild',
      'jest',
      'msw',
      '@stoplight',
      'tsc',
      'Containerfile',
      '.git',
    ])
      expect(names).not.toContain(absent);
    expect(listing).not.toMatch(/\.ts$/m);
    const history = await podman('history', '--no-trunc', '--format', '{{.CreatedBy}}', IMAGE);
    const environment = await podman('image', 'inspect', IMAGE, '--format', '{{json .Config.Env}}');
    for (const secret of ['NODE_EXTRA_CA_CERTS', 'PASSWORD']) {
      expect(history).not.toContain(secret);
      expect(environment).not.toContain(secret);
    }
  });

  test('carries no package manager and no program that raises privileges', async () => {
    const found = await inImage(
      'for c in npm npx corepack apt apt-get dpkg; do command -v $c; done; ls /usr/local/lib/node_modules 2>/dev/null; find / -xdev -perm /6000 -type f 2>/dev/null; true',
    );
    expect(found).toBe('');
  });

  test('says what it is, runs as an unprivileged user, and answers its health check', async () => {
    const labels = JSON.parse(await podman('image', 'inspect', IMAGE, '--format', '{{json .Config.Labels}}')) as Record<string, string>;
    const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
    expect(labels).toMatchObject({ 'org.opencontainers.image.title': 'user-records-service', 'org.opencontainers.image.version': version });
    expect(labels['org.opencontainers.image.revision']).toBe(execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim());
    expect(await podman('image', 'inspect', IMAGE, '--format', '{{.Config.User}}')).toBe('node');
    const container = await start({ volume: await newVolume() });
    expect(await podman('exec', container.id, 'id', '-u')).toBe('1000');
    // Node runs with `npm start`'s options and variables (its memory settings: docs/deployment.md, Sizing), as PID 1.
    const startScript = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start;
    const [, assignments, command] = /^((?:\S+=\S+ )*)exec (.*)$/.exec(startScript)!;
    const commandLine = (await podman('exec', container.id, 'cat', '/proc/1/cmdline')).split('\0').filter(Boolean);
    expect(commandLine).toEqual(command!.split(' '));
    const environment = (await podman('exec', container.id, 'cat', '/proc/1/environ')).split('\0');
    const variables = assignments!
      .split(' ')
      .filter(Boolean)
      .map((assignment) => assignment.replace(/=\$\{\w+:-(.*)\}$/, '=$1'));
    expect(variables.length).toBeGreaterThan(0);
    for (const variable of variables) expect(environment).toContain(variable);
    // The health check the image declares, run as the runtime runs it.
    await expect(podman('healthcheck', 'run', container.id)).resolves.toBeDefined();
    expect(await container.logs()).toContain('"url":"http://0.0.0.0:3000","docs":"http://127.0.0.1:3000/docs"');
  });

  test('hashes a password given on standard input, as docs/deployment.md shows', async () => {
    const printed = await podmanWithInput('an operator secret', 'run', '--rm', '-i', IMAGE, 'node', 'dist/server/tools/hash-password.js');
    const hash = parsePasswordHash(printed);
    expect(hash && (await verifyPassword('an operator secret', hash))).toBe(true);
  }, 60_000);

  test('writes on a read-only root without a tmpfs, as Kubernetes runs it, also after a restart', async () => {
    const volume = await newVolume();
    const statuses: number[] = [];
    for (const round of [1, 2]) {
      const container = await start({ volume, tmpfs: false });
      expect(await podman('exec', container.id, 'sh', '-c', 'touch /tmp/x 2>&1 || true')).toMatch(/Read-only file system/);
      // Creates 50 at a time, so that commits group many writes (each a savepoint with a journal of its own),
      // and replaces, which rewrite the search index's rows.
      for (let batch = 0; batch < 6; batch++) {
        const answers = await Promise.all(
          Array.from({ length: 50 }, () =>
            fetch(`${container.url}/users`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(buildUserInput()) }),
          ),
        );
        statuses.push(...answers.map((answer) => answer.status));
        const { id } = (await answers[0]!.json()) as { id: number };
        const replaced = await fetch(`${container.url}/users/${id}`, {
          method: 'PUT',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(buildUserInput()),
        });
        statuses.push(replaced.status);
      }
      expect({ round, failed: statuses.filter((status) => status >= 300) }).toEqual({ round, failed: [] });
      await podman('stop', container.id);
    }
  }, 120_000);

  test("docs/deployment.md's commands, as written, run a container that serves the protected resource with the hash given", async () => {
    const name = `user-records-doc-${process.pid}`;
    const port = await freePort();
    const script = docBlock('docs/deployment.md', 'image-run', [
      ['podman volume create user-records', `podman volume create ${name}`],
      ['--name user-records ', `--name ${name} `],
      ['-p 3000:3000 -v user-records:/data', `-p 127.0.0.1:${port}:3000 -v ${name}:/data`],
      ["'scrypt$…'", `'${await hashPassword(credentials.password)}'`],
    ]);
    volumes.push(name);
    containers.push(name);
    execFileSync('bash', ['-c', script], { cwd: new URL('../..', import.meta.url), stdio: ['ignore', 'ignore', 'pipe'], timeout: 600_000 });
    const url = `http://127.0.0.1:${port}`;
    for (
      let tries = 0;
      (await fetch(`${url}/readyz`).then(
        (response) => response.status,
        () => 0,
      )) !== 200;
      tries++
    ) {
      if (tries > 300) throw new Error(`the container did not become ready within 30 s:\n${await podman('logs', name)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
    expect((await fetch(`${url}/protected-resource`, { headers: { authorization } })).status).toBe(200);
    expect(await inspect(name, '{{.HostConfig.ReadonlyRootfs}}')).toBe('true');
  }, 600_000);

  test('keeps its data on the volume across podman rm and a new container', async () => {
    const volume = await newVolume();
    const first = await start({ volume });
    const created = await fetch(`${first.url}/users`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(buildUserInput()),
    });
    expect(created.status).toBe(201);
    const user = (await created.json()) as { id: number };
    await podman('stop', first.id);
    await podman('rm', first.id);
    const second = await start({ volume });
    expect(await (await fetch(`${second.url}/users/${user.id}`)).json()).toEqual(user);
    expect(await (await fetch(`${second.url}/users`)).json()).toEqual([user]);
  });

  test('podman stop under steady load answers every request the service received, and exits 0', async () => {
    const container = await start({ volume: await newVolume(), env: { LOG_LEVEL: 'debug', SHUTDOWN_TIMEOUT_MS: '5000', RATE_LIMIT_WRITES_PER_MINUTE: '0' } });
    const load = startIdentifiedLoad(container.url, { clients: 10, readPath: '/users?limit=5' });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const stopping = Date.now();
    await podman('stop', '--time', '20', container.id);
    console.log(`podman stop took ${Date.now() - stopping} ms`);
    await load.stop();
    expect(await inspect(container.id, '{{.State.ExitCode}}')).toBe('0');
    const output = await container.logs();
    expect(logEntries(output).some((entry) => entry.msg === 'shutting down' && entry.signal === 'SIGTERM')).toBe(true);
    // The load's requests (the readiness poll before it has ids of the service's own).
    const { received, completed } = loggedRequests(output);
    expect(received.length).toBeGreaterThan(50);
    expect(received.filter((id) => !completed.has(id) || !load.answered.has(id))).toEqual([]);
    expect(new Set(load.answered.values())).toEqual(new Set([200, 201]));
  }, 60_000);

  describe('the acceptance scenarios, on a SQLite volume with a read-only root', () => {
    let container: Container;
    beforeAll(async () => {
      container = await start({ volume: await newVolume(), env: { SEED_DEMO_DATA: 'true' } });
    }, 60_000);
    describeScenarios('server', () => ({ baseUrl: container.url, credentials }));
  });
});
