import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { startRegistry, type Registry } from '../support/verdaccio.js';

// The kit as a frontend team gets it: published to a registry (a real one, Verdaccio, on loopback), installed
// by version into a fresh app that has none of the server's toolchain, then used there: MSW handlers in a
// test program, and a type check.

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const version = (JSON.parse(readFileSync(join(ROOT, 'client/package.json'), 'utf8')) as { version: string }).version;
const msw = `msw@${(JSON.parse(readFileSync(join(ROOT, 'node_modules/msw/package.json'), 'utf8')) as { version: string }).version}`;

let registry: Registry;
let app: string;
beforeAll(async () => {
  registry = await startRegistry();
  const packed = mkdtempSync(join(tmpdir(), 'client-tarball-'));
  await run('npm', ['pack', '--silent', '--pack-destination', packed], { cwd: join(ROOT, 'client') });
  registry.publish(join(packed, readdirSync(packed).find((name) => name.endsWith('.tgz'))!));
  rmSync(packed, { recursive: true, force: true });
  app = mkdtempSync(join(tmpdir(), 'frontend-app-'));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'frontend-app', private: true, type: 'module' }));
  // The team's registry for the kit's scope; everything else from the usual one.
  writeFileSync(join(app, '.npmrc'), `@user-records:registry=${registry.url}\n`);
}, 180_000);
afterAll(async () => {
  await registry?.stop();
  if (app) rmSync(app, { recursive: true, force: true });
});

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

test('with msw beside it, its handlers answer the app\'s code as the service would, and its types check', async () => {
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', msw], { cwd: app });
  writeFileSync(
    join(app, 'users.test.ts'),
    `import { setupServer } from 'msw/node';
import { createUserRecordsClient } from '@user-records/client';
import { createMockHandlers } from '@user-records/client/msw';

const api = createUserRecordsClient({ baseUrl: 'https://api.example.test' });
const handlers = createMockHandlers({ baseUrl: 'https://api.example.test' });
const server = setupServer(...handlers);
server.listen({ onUnhandledRequest: 'error' });
const created = await api.POST('/users', { body: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' } });
const refused = await api.POST('/users', { body: { firstName: 'Ada', lastName: 'Lovelace', email: 'not an address' } });
const id: number | undefined = created.data?.id;
server.close();
console.log(JSON.stringify({ status: created.response.status, id, refused: refused.response.status, problem: refused.error?.type }));
`,
  );
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true, skipLibCheck: false, types: [] }, files: ['users.test.ts', 'docs-example.ts'] }),
  );
  // The client example of docs/frontend.md, as a reader copies it, compiles against the published types.
  const example = /```ts\n(import \{ createUserRecordsClient \} from '@user-records\/client';[\s\S]*?)```/.exec(readFileSync(join(ROOT, 'docs/frontend.md'), 'utf8'))![1]!;
  writeFileSync(
    join(app, 'docs-example.ts'),
    `// What the example leaves to its reader.\ndeclare const savedEtag: string;\ndeclare function useCached(): void;\ndeclare function retry(): void;\ndeclare function render(users: readonly { id: number }[]): void;\n${example}export {};\n`,
  );
  await expect(run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', app], { cwd: app }).catch((failed: { stdout: string }) => Promise.reject(new Error(failed.stdout)))).resolves.toBeDefined();
  const { stdout } = await run(process.execPath, ['--experimental-strip-types', 'users.test.ts'], { cwd: app });
  expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({ status: 201, id: 13, refused: 422, problem: 'urn:user-records:problem:validation-failed' });
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
    expect((await fetch(`${url}/users`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ firstName: 'N', lastName: 'Px', email: 'npx@example.com' }) })).status).toBe(201);
    const reset = await fetch(`${url}/__sandbox/reset`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(reset.status).toBe(204);
    expect(await (await fetch(`${url}/users`)).json()).toHaveLength(12);
  } finally {
    child.kill('SIGTERM');
  }
  expect(await exited).toBe(0);
}, 60_000);
