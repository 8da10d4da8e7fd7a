import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { docBlock } from '../support/doc-blocks.js';
import { startRegistry, type Registry } from '../support/verdaccio.js';

// The kit as a frontend team gets it: published to a registry (a real one, Verdaccio, on loopback), installed
// by version into a fresh app that has none of the server's toolchain, then used there: MSW handlers in a
// test program, and a type check.

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const version = (JSON.parse(readFileSync(join(ROOT, 'client/package.json'), 'utf8')) as { version: string }).version;
const VITEST = 'vitest@5.1.1';
const msw = `msw@${(JSON.parse(readFileSync(join(ROOT, 'node_modules/msw/package.json'), 'utf8')) as { version: string }).version}`;

let registry: Registry;
let app: string;
/** A fresh clone of this repository, with nothing installed: where a maintainer publishes from. */
let clone: string;
let published: { stdout: string; stderr: string };
let rehearsal: { stdout: string; stderr: string };
/** The publish command of docs/frontend.md marked `id`, run in the clone against the test's registry. */
const publishAsDocumented = (id: string) =>
  run('bash', ['-c', docBlock('docs/frontend.md', id, [['https://npm.example.internal', registry.url]])], { cwd: clone, env: registry.env });
beforeAll(async () => {
  registry = await startRegistry();
  clone = mkdtempSync(join(tmpdir(), 'client-clone-'));
  await run('git', ['clone', '--quiet', ROOT, clone]);
  // A maintainer's rehearsal first: it must build too (the build tools' install is no dry run).
  rehearsal = await run('npm', ['publish', '--dry-run'], { cwd: join(clone, 'client'), env: registry.env });
  published = await publishAsDocumented('publish');
  app = mkdtempSync(join(tmpdir(), 'frontend-app-'));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'frontend-app', private: true, type: 'module' }));
  // The team's registry for the kit's scope; everything else from the usual one.
  writeFileSync(join(app, '.npmrc'), `@user-records:registry=${registry.url}\n`);
}, 240_000);
afterAll(async () => {
  await registry?.stop();
  for (const dir of [app, clone]) if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The registry's record of the package: its versions' manifests and its tags. */
async function packument(): Promise<{
  'dist-tags': Record<string, string>;
  versions: Record<string, { bin?: unknown; dist: { tarball: string } }>;
  readme?: string;
}> {
  return (await fetch(`${registry.url}@user-records%2fclient`)).json() as never;
}

test('a fresh clone publishes the package as docs/frontend.md says: no root install, the released contract checked, no warning', async () => {
  expect(existsSync(join(clone, 'node_modules'))).toBe(false);
  expect(published.stdout).toContain(`@user-records/client@${version}: the contract is the released openapi/released/${version}.yaml`);
  expect(published.stdout).toContain(`+ @user-records/client@${version}`);
  expect(published.stderr).not.toMatch(/npm warn/i);
  expect(rehearsal.stdout).toContain(`+ @user-records/client@${version}`);
  expect(rehearsal.stderr).not.toMatch(/npm warn/i);
  const record = await packument();
  expect(record.versions[version]?.bin).toEqual({ 'user-records-sandbox': 'bin/user-records-sandbox.js' });
  const tarball = join(clone, 'published.tgz');
  writeFileSync(tarball, Buffer.from(await (await fetch(record.versions[version]!.dist.tarball)).arrayBuffer()));
  const { stdout: files } = await run('tar', ['-tzf', tarball]);
  expect(files.split('\n')).toEqual(expect.arrayContaining(['package/README.md', 'package/bin/user-records-sandbox.js', 'package/dist/client/src/index.js']));
});

test('a fix for an older major is published under its own tag, as docs/frontend.md says, and latest stays', async () => {
  // The clone as a branch from 1.0.0's release would be after the fix and `make release-contract`: its
  // contract and package at 1.0.1, released; no later release recorded.
  const fixed = readFileSync(join(clone, 'openapi/released/1.0.0.yaml'), 'utf8').replace(/^( {2}version:) 1\.0\.0$/m, '$1 1.0.1');
  for (const later of readdirSync(join(clone, 'openapi/released')).filter((name) => name !== '1.0.0.yaml')) rmSync(join(clone, 'openapi/released', later));
  writeFileSync(join(clone, 'openapi/released/1.0.1.yaml'), fixed);
  writeFileSync(join(clone, 'openapi/user-records.yaml'), fixed);
  const manifest = JSON.parse(readFileSync(join(clone, 'client/package.json'), 'utf8'));
  writeFileSync(join(clone, 'client/package.json'), JSON.stringify({ ...manifest, version: '1.0.1' }));
  const untagged = await run('npm', ['publish'], { cwd: join(clone, 'client'), env: registry.env }).catch((error) => error);
  expect(untagged.stderr).toContain('You must specify a tag using --tag');
  await publishAsDocumented('publish-older-major');
  expect((await packument())['dist-tags']).toEqual({ latest: version, 'latest-1': '1.0.1' });
}, 120_000);

test('a fresh app installs the published client by version: few packages, no native build', async () => {
  const started = performance.now();
  const { stdout } = await run('npm', ['install', '--no-audit', '--no-fund', `@user-records/client@${version}`], { cwd: app });
  const seconds = (performance.now() - started) / 1000;
  const added = Number(/added (\d+) packages?/.exec(stdout)?.[1]);
  console.log(`@user-records/client@${version} from the registry: ${added} packages in ${seconds.toFixed(1)} s`);
  expect(added).toBeLessThanOrEqual(30);
  const installed = JSON.parse(readFileSync(join(app, 'node_modules/@user-records/client/package.json'), 'utf8')) as { version: string };
  expect(installed.version).toBe(version);
}, 120_000);

/** A ```ts block of docs/frontend.md: the one that begins with `first`, as a reader copies it. */
function docsBlock(first: string): string {
  const blocks = [...readFileSync(join(ROOT, 'docs/frontend.md'), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
  const block = blocks.find((text) => text.startsWith(first));
  if (block === undefined) throw new Error(`docs/frontend.md has no ts block that begins with ${first}`);
  return block;
}

test("a Vite app's Vitest suite runs on the handlers, set up as docs/frontend.md says; its code and the docs' example type-check", async () => {
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', msw, VITEST], { cwd: app });
  // The setup file of docs/frontend.md, word for word, with Vitest's globals.
  writeFileSync(join(app, 'setup.ts'), docsBlock("import { setupServer } from 'msw/node';"));
  writeFileSync(join(app, 'vitest.config.ts'), `export default { test: { globals: true, setupFiles: ['./setup.ts'] } };\n`);
  writeFileSync(
    join(app, 'users.test.ts'),
    `import { changeUser, createSandboxClient, createUserRecordsClient } from '@user-records/client';

// Made when the module loads, before the setup's server listens: the client looks fetch up at each call.
const api = createUserRecordsClient({ baseUrl: 'http://api.test' });
const ada = { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' };

test('a create is stored as the service stores it', async () => {
  const created = await api.POST('/users', { body: ada });
  expect(created.status).toBe(201);
  if (created.status === 201) expect([created.data.id, created.headers.ETag]).toEqual([13, '"1"']);
});

test('each test starts from the demo data: the setup resets the store', async () => {
  const created = await api.POST('/users', { body: ada });
  expect(created.data?.id).toBe(13);
});

test('a bad address is the service\\'s own 422, narrowed by status', async () => {
  const refused = await api.POST('/users', { body: { ...ada, email: 'not an address' } });
  if (refused.status !== 422) throw new Error('expected 422, got ' + refused.status);
  expect(refused.error.type).toBe('urn:user-records:problem:validation-failed');
  expect(refused.error.errors?.[0]?.path).toBe('/email');
});

test('a conditional read is not modified; changeUser writes with the ETag it read', async () => {
  const read = await api.GET('/users/{id}', { params: { path: { id: 2 } } });
  if (read.status !== 200) throw new Error('expected 200, got ' + read.status);
  const again = await api.GET('/users/{id}', { params: { path: { id: 2 }, header: { 'If-None-Match': read.headers.ETag } } });
  expect(again.notModified).toBe(true);
  const changed = await changeUser(api, '/users/{id}', 2, (user) => ({ lastName: user.lastName.toUpperCase() }));
  if (changed.conflict) throw new Error('expected the change, got a conflict with ' + changed.current.etag);
  expect([changed.user.lastName, changed.etag, changed.attempts]).toEqual(['WREN', '"2"', 1]);
});

test('a sandbox client sends the sandbox\\'s controls: Prefer answers the contract\\'s example', async () => {
  const sandbox = createSandboxClient({ baseUrl: 'http://api.test' });
  const down = await sandbox.GET('/users', { params: { header: { Prefer: 'code=503, example=storeDown' } } });
  if (down.status !== 503) throw new Error('expected 503, got ' + down.status);
  expect(down.error.type).toBe('urn:user-records:problem:store-unavailable');
});
`,
  );
  // The client examples of docs/frontend.md, as a reader copies them, compile against the published types.
  writeFileSync(
    join(app, 'docs-example.ts'),
    `// What the example leaves to its reader.\ndeclare const savedEtag: string;\ndeclare function useCached(): void;\ndeclare function retry(): void;\ndeclare function render(users: readonly { id: number }[]): void;\n${docsBlock("import { createUserRecordsClient } from '@user-records/client';")}export {};\n`,
  );
  writeFileSync(join(app, 'sandbox-example.ts'), `${docsBlock("import { createSandboxClient, preferFor } from '@user-records/client';")}export {};\n`);
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'es2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: ['vitest/globals'],
      },
      files: ['setup.ts', 'users.test.ts', 'docs-example.ts', 'sandbox-example.ts'],
    }),
  );
  await expect(
    run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', app], { cwd: app }).catch((failed: { stdout: string }) => Promise.reject(new Error(failed.stdout))),
  ).resolves.toBeDefined();
  await run(join(app, 'node_modules/.bin/vitest'), ['run', '--reporter=json', '--outputFile=vitest.json'], { cwd: app }).catch(
    (failed: { stdout: string; stderr: string }) => {
      throw new Error(`vitest failed:\n${failed.stdout}\n${failed.stderr}`);
    },
  );
  const report = JSON.parse(readFileSync(join(app, 'vitest.json'), 'utf8')) as { numPassedTests: number; numFailedTests: number };
  expect([report.numPassedTests, report.numFailedTests]).toEqual([5, 0]);
}, 180_000);

test("the browser setup of docs/frontend.md builds with Vite: the handlers and the client in the app's bundle", async () => {
  writeFileSync(join(app, 'index.html'), '<!doctype html><script type="module" src="/main.ts"></script>\n');
  writeFileSync(
    join(app, 'main.ts'),
    `${docsBlock("import { setupWorker } from 'msw/browser';")}import { createUserRecordsClient } from '@user-records/client';\nconst users = await createUserRecordsClient({ baseUrl: \`\${location.origin}/api-mock\` }).GET('/users');\ndocument.body.textContent = String(users.data?.length);\n`,
  );
  await run(join(app, 'node_modules/.bin/vite'), ['build', '--logLevel', 'error'], { cwd: app });
  const assets = readdirSync(join(app, 'dist/assets')).filter((name) => name.endsWith('.js'));
  const bytes = assets.map((name) => readFileSync(join(app, 'dist/assets', name)));
  const gzip = bytes.reduce((sum, code) => sum + gzipSync(code).length, 0);
  console.log(`Vite build of a page with msw, the handlers and the client: ${assets.length} chunk(s), ${(gzip / 1000).toFixed(1)} kB gzip`);
  // The service's code is in it: its problem types and the contract's routes.
  expect(bytes.some((code) => code.includes('urn:user-records:problem:'))).toBe(true);
}, 120_000);

test('the installed package runs the sandbox: npx user-records-sandbox, no clone, no native build', async () => {
  const child = spawn(join(app, 'node_modules/.bin/user-records-sandbox'), ['--port', '0', '--latency', '0'], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let printed = '';
      child.stdout.on('data', (chunk: Buffer) => {
        printed += chunk.toString();
        const listening = /"url":"([^"]+)"/.exec(printed);
        if (listening) resolve(listening[1]!);
      });
      child.stderr.on('data', (chunk: Buffer) => (printed += chunk.toString()));
      child.once('exit', (code) => reject(new Error(`the sandbox exited with ${code}:\n${printed}`)));
    });
    expect(await (await fetch(`${url}/users/2`)).json()).toMatchObject({ id: 2, firstName: 'Tobias' });
    expect(
      (
        await fetch(`${url}/users`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ firstName: 'N', lastName: 'Px', email: 'npx@example.com' }),
        })
      ).status,
    ).toBe(201);
    const reset = await fetch(`${url}/__sandbox/reset`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(reset.status).toBe(204);
    expect(await (await fetch(`${url}/users`)).json()).toHaveLength(12);
  } finally {
    child.kill('SIGTERM');
  }
  expect(await exited).toBe(0);
}, 60_000);
