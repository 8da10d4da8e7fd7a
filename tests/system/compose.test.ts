import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { docBlock } from '../support/doc-blocks.js';
import { buildImage, podman, podmanAvailable } from '../support/podman.js';
import { slotPort } from '../support/ports.js';
import { startSteadyLoad, type SteadyLoadResult } from '../support/steady-load.js';
import { commandRuns, toolReady } from '../support/system-tools.js';

// compose.yaml run by podman-compose (Debian 12's 1.0), on images made here from Debian's packages where no
// registry is reached (make service-images): docs/deployment.md's commands as written (compose.yaml's header
// gives the same, tests/unit/compose-file.test.ts), its rolling restart of both instances under steady load,
// and what `down` leaves behind. A project of the test's own, on a port of its own.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const composeReady = (): boolean =>
  podmanAvailable() &&
  toolReady(
    commandRuns('podman-compose', ['version']) && commandRuns('socat', ['-V']) ? undefined : 'podman-compose or socat is missing',
    'the compose tests',
    'make compose-tools installs them',
  );
const describeCompose = composeReady() ? describe : describe.skip;

describeCompose('compose.yaml, run by podman-compose as written', () => {
  const project = `urc${randomBytes(4).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'user-records-compose-'));
  let port: number;
  let url: string;
  /** What the header's commands exported, which every later compose command needs. */
  let env: NodeJS.ProcessEnv;
  const volumes = async () => new Set((await podman('volume', 'ls', '--format', '{{.Name}}')).split('\n').filter(Boolean));
  const containerOf = async (service: string) =>
    podman('ps', '-a', '-q', '--filter', `label=com.docker.compose.project=${project}`, '--filter', `label=com.docker.compose.service=${service}`);
  const psql = async (sql: string) =>
    (await podman('exec', await containerOf('postgres'), 'psql', '-At', '-U', 'user_records', '-d', 'users', '-c', sql)).split('\n').filter(Boolean);

  beforeAll(async () => {
    buildImage();
    execFileSync('make', ['-s', 'service-images'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], timeout: 900_000 });
    port = await slotPort();
    url = `http://127.0.0.1:${port}`;
  }, 1_200_000);
  afterAll(async () => {
    if (env) await run('podman-compose', ['-p', project, 'down'], { cwd: ROOT, env }).catch(() => undefined);
    for (const volume of await volumes()) if (volume.startsWith(`${project}_`)) await podman('volume', 'rm', '-f', volume).catch(() => undefined);
    await podman('network', 'rm', '-f', `${project}_default`).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  test("docs/deployment.md's commands, as written, bring the topology up and answer as they say: the user created is the one read", async () => {
    const script = [
      docBlock('docs/deployment.md', 'compose-up', [
        ["printf %s '…'", "printf %s 'compose-test-pass'"],
        ['-p user-records', `-p ${project}`],
        ['127.0.0.1:8080', `127.0.0.1:${port}`],
      ]),
      // What the block exported, for the compose commands that follow (they read the same variables).
      `env -0 > ${dir}/env`,
    ].join('\n');
    const began = performance.now();
    const { stdout } = await run('bash', ['-c', script], {
      cwd: ROOT,
      env: { ...process.env, HTTP_PORT: String(port), CONTAINERS_CONF: `${ROOT}deploy/containers.conf` },
      timeout: 300_000,
    });
    console.log(`compose: up, ready, and both example commands answered in ${((performance.now() - began) / 1000).toFixed(1)} s`);
    env = Object.fromEntries(
      readFileSync(`${dir}/env`, 'utf8')
        .split('\0')
        .filter(Boolean)
        .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
    );
    // The block's last two commands print the user created and the user read (make image prints before them).
    const ada = { id: 1, firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' };
    expect((stdout.match(/\{"id"[^}]*\}/g) ?? []).slice(-2).map((text) => JSON.parse(text))).toEqual([ada, ada]);
    expect(env.BASIC_AUTH_PASSWORD_HASH).toMatch(/^scrypt\$/);
    // The instances connect as the role that cannot change the schema; the migrations ran as its owner.
    expect(await psql("select usename from pg_stat_activity where datname = 'users' and usename is not null group by usename order by usename")).toContain(
      'user_records_app',
    );
    expect(await psql("select tableowner from pg_tables where tablename = 'users'")).toEqual(['user_records']);
  }, 360_000);

  test("docs/deployment.md's rolling restart (deploy/rolling-restart.sh) replaces both instances under steady load: no request fails, no acknowledged create is lost or made twice", async () => {
    expect(env).toBeDefined();
    const before = { app1: await containerOf('app1'), app2: await containerOf('app2') };
    // Each instance opens the rest of its pool's connections on a first burst of reads. On this machine, for up
    // to about 45 s after a podman network is made, one instance's new connections may wait for their name
    // lookups past the 5 s an instance waits for a connection (podman 4.3's aardvark-dns; the first lookups of
    // a process there took up to 25 s): those reads are 503 store-unavailable, as the service answers a database
    // it cannot reach in time (docs/deployment.md). That is the network's first minute, not a restart's, so the
    // load begins once both instances serve a burst.
    const burst = async () =>
      (await Promise.all(Array.from({ length: 40 }, () => fetch(`${url}/users/1`).then((response) => response.status)))).every((status) => status === 200);
    const warming = performance.now();
    while (!(await burst())) if (performance.now() - warming > 120_000) throw new Error('the instances did not serve a burst of reads within 120 s');
    console.log(`compose: both instances served a burst of reads after ${((performance.now() - warming) / 1000).toFixed(1)} s`);
    // Reads, and creates with an Idempotency-Key within the per-client write limit (600 a minute, all from the
    // proxy's one client here).
    const load = startSteadyLoad(url, { perSecond: 60, createEvery: 15, readIds: [1], keyPrefix: `${project}-rolling` });
    let rolled: { stderr: string };
    let rolledSeconds: number;
    let result: SteadyLoadResult;
    try {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const began = performance.now();
      rolled = await run('bash', ['-c', docBlock('docs/deployment.md', 'rolling-restart', [['PROJECT=user-records', `PROJECT=${project}`]])], {
        cwd: ROOT,
        env: { ...env, CONTAINERS_CONF: `${ROOT}deploy/containers.conf` },
        timeout: 300_000,
      });
      rolledSeconds = (performance.now() - began) / 1000;
      await new Promise((resolve) => setTimeout(resolve, 1500));
    } finally {
      result = await load.stop();
    }
    const emails = [...result.acknowledged.keys()].map((key) => `${key}@example.com`);
    console.log(
      `compose rolling restart: ${rolledSeconds.toFixed(1)} s; ${result.sent} requests in ${result.seconds.toFixed(1)} s, ` +
        `${result.acknowledged.size} acknowledged creates, ${result.failures.length} failed`,
    );
    expect(rolled.stderr).toMatch(/app1 replaced[\s\S]*app2 replaced[\s\S]*rolling-restart: done/);
    expect(result.failures).toEqual([]);
    expect(result.sent).toBeGreaterThan(600);
    const after = { app1: await containerOf('app1'), app2: await containerOf('app2') };
    expect(after.app1).not.toBe(before.app1);
    expect(after.app2).not.toBe(before.app2);
    const stored = await psql(`select email from users where email like '${project}-rolling-%' order by email`);
    expect(stored.length).toBe(new Set(stored).size);
    expect(new Set(stored)).toEqual(new Set(emails));
  }, 360_000);

  test('down leaves no container and no anonymous volume: only the named volumes (the database, the socket)', async () => {
    expect(env).toBeDefined();
    const containers = (await podman('ps', '-a', '-q', '--filter', `label=com.docker.compose.project=${project}`)).split('\n');
    const used = new Set((await podman('inspect', '--format', '{{range .Mounts}}{{.Name}} {{end}}', ...containers)).split(/\s+/).filter(Boolean));
    await run('podman-compose', ['-p', project, 'down'], { cwd: ROOT, env: { ...env, CONTAINERS_CONF: `${ROOT}deploy/containers.conf` } });
    expect(await podman('ps', '-a', '-q', '--filter', `label=com.docker.compose.project=${project}`)).toBe('');
    const present = await volumes();
    expect([...used].filter((volume) => present.has(volume)).sort()).toEqual([`${project}_haproxy-admin`, `${project}_pgdata`]);
  }, 120_000);
});
