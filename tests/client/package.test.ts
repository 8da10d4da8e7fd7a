import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { docSource } from '../support/doc-blocks.js';
import { TEST_CREDENTIALS, useTestServer } from '../support/test-server.js';

// What a developer does with the client: `npm pack`, install the tarball into a fresh project (with msw, the
// peer of its MSW handlers), import it, type-check against its .d.ts files, and call a running server or the
// MSW handlers.

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const sut = useTestServer();
let scratch: string;
/** A second consumer, on msw's other major line: the peer range names both, and both are tried. */
let scratchOnMsw3: string;
/** msw 2 is the repository's own (devDependencies); this is the msw 3 the MSW entry is tried with. */
const MSW_3 = 'msw@3.0.5';

/** A fresh project with the packed client and one msw installed, as a frontend team's app would have them. */
async function consumer(tarballDir: string, msw: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'client-consumer-'));
  const tarball = readdirSync(tarballDir).find((name) => name.endsWith('.tgz'))!;
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(tarballDir, tarball), msw], { cwd: dir });
  return dir;
}

beforeAll(async () => {
  const packed = mkdtempSync(join(tmpdir(), 'client-tarball-'));
  await run('npm', ['pack', '--silent', '--pack-destination', packed], { cwd: join(root, 'client') });
  const msw2 = `msw@${JSON.parse(readFileSync(join(root, 'node_modules/msw/package.json'), 'utf8')).version}`;
  [scratch, scratchOnMsw3] = await Promise.all([consumer(packed, msw2), consumer(packed, MSW_3)]);
  rmSync(packed, { recursive: true, force: true });
}, 180_000);
afterAll(() => {
  for (const dir of [scratch, scratchOnMsw3]) if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the packed client installs and works from plain JavaScript', async () => {
  writeFileSync(
    join(scratch, 'use.mjs'),
    `import { createUserRecordsClient } from '@user-records/client';
const [baseUrl, username, password] = process.argv.slice(2);
const client = createUserRecordsClient({ baseUrl, credentials: { username, password } });
const created = await client.POST('/users', { body: { firstName: 'Packed', lastName: 'Client', email: 'packed@example.com' } });
const read = await client.GET('/api/users/{id}', { params: { path: { id: created.data.id } } });
const missing = await client.GET('/users/{id}', { params: { path: { id: 999999 } } });
const secret = await client.GET('/protected-resource', { parseAs: 'text' });
console.log(JSON.stringify({ created: created.response.status, read: read.data, missing: missing.error.status, secret: secret.data }));
`,
  );
  const { stdout } = await run(process.execPath, ['use.mjs', sut.server.url, TEST_CREDENTIALS.username, TEST_CREDENTIALS.password], { cwd: scratch });
  const result = JSON.parse(stdout);
  expect(result).toEqual({
    created: 201,
    read: { data: { id: expect.any(Number), email: 'packed@example.com', first_name: 'Packed', last_name: 'Client' } },
    missing: 404,
    secret: `Hello, ${TEST_CREDENTIALS.username}. You are authenticated.`,
  });
});

test('its type declarations type-check a consumer, and reject misuse', async () => {
  writeFileSync(
    join(scratch, 'use.ts'),
    `import { createUserRecordsClient, type Problem } from '@user-records/client';
const client = createUserRecordsClient({ baseUrl: 'http://127.0.0.1:3000' });
export async function main(): Promise<string | undefined> {
  const { data, error } = await client.GET('/users/{id}', { params: { path: { id: 1 } } });
  const problem: Problem | undefined = error;
  // @ts-expect-error the id is an integer
  await client.GET('/users/{id}', { params: { path: { id: 'one' } } });
  return data?.firstName ?? problem?.detail;
}
`,
  );
  writeFileSync(
    join(scratch, 'mocks.ts'),
    `import type { HttpHandler } from 'msw';
import { createMockHandlers, type MockHandlers } from '@user-records/client/msw';
const handlers: MockHandlers = createMockHandlers({ baseUrl: 'http://api.test', credentials: { username: 'me', password: 'pw' } });
const asMsw: HttpHandler[] = handlers;
handlers.reset();
// @ts-expect-error a base URL is required
createMockHandlers({});
export { asMsw };
`,
  );
  writeFileSync(
    join(scratch, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2022', 'DOM'], types: [] },
      files: ['use.ts', 'mocks.ts'],
    }),
  );
  await expect(run(join(root, 'node_modules/.bin/tsc'), ['-p', scratch], { cwd: scratch })).resolves.toBeDefined();
});

test('a path or a member the contract does not have is a compile error that names it', async () => {
  writeFileSync(
    join(scratch, 'unknown.ts'),
    `import { createUserRecordsClient } from '@user-records/client';
const client = createUserRecordsClient({ baseUrl: 'http://127.0.0.1:3000' });
export const nope = client.GET('/nope');
export const wrongMethod = client.POST('/users/{id}', { params: { path: { id: 1 } } });
export const typo = client.POST('/users', { body: { firstName: 'A', lastName: 'B', email: 'a@example.com', emial: 'a@example.com' } });
export const misspelt = client.GET('/users', { sginal: AbortSignal.timeout(1000) });
`,
  );
  const options = { strict: true, noEmit: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2022', 'DOM'], types: [] };
  writeFileSync(join(scratch, 'tsconfig.unknown.json'), JSON.stringify({ compilerOptions: options, files: ['unknown.ts'] }));
  const failed = await run(join(root, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.unknown.json'], { cwd: scratch }).then(
    () => undefined,
    (error: { stdout: string }) => error.stdout,
  );
  expect(failed).toContain(`Argument of type '"/nope"' is not assignable to parameter of type '"/nope is not a GET path of the User Records Service"'.`);
  expect(failed).toContain(
    `Argument of type '"/users/{id}"' is not assignable to parameter of type '"/users/{id} is not a POST path of the User Records Service"'.`,
  );
  expect(failed).toContain(`Type 'string' is not assignable to type 'UnknownMember<"emial", "the body of POST /users">'.`);
  expect(failed).toContain(`Object literal may only specify known properties, but 'sginal' does not exist in type`);
});

test.each([
  ['2', () => scratch],
  ['3', () => scratchOnMsw3],
])('its MSW entry answers as the service, in a project that installed msw %s', async (major, project) => {
  const dir = project();
  expect(JSON.parse(readFileSync(join(dir, 'node_modules/msw/package.json'), 'utf8')).version).toMatch(new RegExp(`^${major}\\.`));
  writeFileSync(
    join(dir, 'mock.mjs'),
    `import { setupServer } from 'msw/node';
import { createUserRecordsClient } from '@user-records/client';
import { createMockHandlers, unhandledRequests } from '@user-records/client/msw';
const baseUrl = 'http://api.test';
// Made as a module would make it, before MSW replaces fetch: it must still be answered by the handlers.
const client = createUserRecordsClient({ baseUrl, credentials: { username: 'admin', password: 'dev-password' } });
const handlers = createMockHandlers({ baseUrl });
const server = setupServer(...handlers);
server.listen(unhandledRequests('error'));
const created = await client.POST('/users', { body: { firstName: 'Mocked', lastName: 'User', email: 'mocked@example.com' } });
const listed = await client.GET('/users');
const invalid = await client.POST('/api/users', { body: { name: 'A B', email: 'nope' } });
const secret = await client.GET('/protected-resource', { parseAs: 'text' });
handlers.reset();
const afterReset = await client.GET('/users');
server.close();
console.log(JSON.stringify({ created: created.data, listed: listed.data.length, invalid: invalid.error, secret: secret.data, afterReset: afterReset.data.length }));
`,
  );
  const { stdout } = await run(process.execPath, ['mock.mjs'], { cwd: dir });
  expect(JSON.parse(stdout)).toEqual({
    created: { id: 13, firstName: 'Mocked', lastName: 'User', email: 'mocked@example.com' },
    listed: 13,
    invalid: {
      type: 'urn:user-records:problem:validation-failed',
      title: 'Validation failed',
      status: 422,
      detail: 'The request body does not match the schema.',
      instance: '/api/users',
      errors: [{ path: '/email', message: 'must be an e-mail address such as ann@example.com (a domain with a dot; no quotes or IP addresses)' }],
    },
    secret: 'Hello, admin. You are authenticated.',
    afterReset: 12,
  });
});

/** Runs the page's setup file as Vitest or Jest would run it, and asks once through its handlers and once past them. */
const RUN_SETUP_FILE = `import { once } from 'node:events';
import { createServer } from 'node:http';
const hooks = {};
for (const name of ['beforeAll', 'afterEach', 'afterAll']) globalThis[name] = (hook) => void (hooks[name] = hook);
// A site that answers, so that a request MSW let through is seen to reach the network.
const site = createServer((request, response) => response.end('from the network')).listen(0, '127.0.0.1');
await once(site, 'listening');
await import('./msw-setup-file.js');
await hooks.beforeAll();
const handled = await fetch('http://api.test/users/1');
const unhandled = await fetch(\`http://127.0.0.1:\${site.address().port}/\`).then((response) => response.text(), () => 'failed');
await hooks.afterEach();
await hooks.afterAll();
site.close();
console.log(JSON.stringify({ handled: handled.status, unhandled }));
`;

test.each([
  ['2', () => scratch],
  ['3', () => scratchOnMsw3],
])(
  'the MSW blocks of docs/frontend.md and the package README compile on msw %s, and the setup file fails a request no handler takes',
  async (_major, project) => {
    const dir = project();
    writeFileSync(join(dir, 'msw-setup-file.ts'), docSource('docs/frontend.md', 'msw-setup-file', 'ts'));
    writeFileSync(join(dir, 'msw-browser.ts'), docSource('docs/frontend.md', 'msw-browser', 'ts'));
    writeFileSync(join(dir, 'readme-client.ts'), docSource('client/README.md', 'readme-client', 'ts'));
    writeFileSync(join(dir, 'readme-msw.ts'), docSource('client/README.md', 'readme-msw', 'ts'));
    // The test runner's globals, as Vitest (globals: true) and Jest give them to a setup file.
    writeFileSync(
      join(dir, 'runner.d.ts'),
      ['beforeAll', 'afterEach', 'afterAll'].map((name) => `declare function ${name}(hook: () => unknown): void;\n`).join(''),
    );
    const options = { strict: true, outDir: 'out', module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2022', 'DOM'], types: [] };
    writeFileSync(
      join(dir, 'tsconfig.docs.json'),
      JSON.stringify({ compilerOptions: options, files: ['runner.d.ts', 'msw-setup-file.ts', 'msw-browser.ts', 'readme-client.ts', 'readme-msw.ts'] }),
    );
    const compiled = await run(join(root, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.docs.json'], { cwd: dir }).then(
      () => 'compiled',
      (error: { stdout: string }) => error.stdout,
    );
    expect(compiled).toBe('compiled');
    writeFileSync(join(dir, 'out/run-setup-file.mjs'), RUN_SETUP_FILE);
    const { stdout, stderr } = await run(process.execPath, ['out/run-setup-file.mjs'], { cwd: dir });
    expect(JSON.parse(stdout)).toEqual({ handled: 200, unhandled: 'failed' });
    expect(stderr).toContain('[MSW] Error: intercepted a request without a matching request handler');
  },
);
