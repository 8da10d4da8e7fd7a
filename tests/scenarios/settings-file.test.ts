import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { runServerToExit, serverOnNewSqliteStore, startServerProcessIn } from '../support/server-process.js';

// The settings file (docs/operations.md, Configuration): `.env` in the folder the server starts in, or the file
// ENV_FILE names, fills what the environment leaves unset; the environment wins; make's development defaults
// yield to both.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const server = serverOnNewSqliteStore();
let folder: string;
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'user-records-settings-'));
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

/** A create whose body is about 200 bytes: refused (413) under a body limit of 100 bytes. */
const create = (url: string) =>
  fetch(`${url}/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ firstName: 'Settings', lastName: 'File'.repeat(30), email: 'settings-file@example.com' }),
  }).then((response) => response.status);

/** The answer to that create from a server started in the test's folder with `env`. */
async function createStatus(env: Record<string, string> = {}): Promise<number> {
  const started = await startServerProcessIn(folder, server.store, env);
  try {
    return await create(started.url);
  } finally {
    await started.stop();
  }
}

test('.env in the folder the server starts in fills a setting the environment leaves unset, in Node’s format', async () => {
  writeFileSync(join(folder, '.env'), '# the body limit, for this test\nBODY_LIMIT_BYTES=100 # a comment after it\nexport SEARCH_QUEUE="12"\n');
  expect(await createStatus()).toBe(413);
});

test('the environment wins over the settings file', async () => {
  writeFileSync(join(folder, '.env'), 'BODY_LIMIT_BYTES=100\n');
  expect(await createStatus({ BODY_LIMIT_BYTES: '65536' })).toBe(201);
});

test('ENV_FILE names another file; ENV_FILE= reads none', async () => {
  const file = join(folder, 'service.env');
  writeFileSync(file, 'BODY_LIMIT_BYTES=100\n');
  writeFileSync(join(folder, '.env'), 'BODY_LIMIT_BYTES=100\n');
  expect(await createStatus({ ENV_FILE: file })).toBe(413);
  expect(await createStatus({ ENV_FILE: '' })).toBe(201);
});

test('a settings file ENV_FILE names that cannot be read stops the start in one line', async () => {
  const missing = join(folder, 'missing.env');
  const { code, output } = await runServerToExit(server.store, { ENV_FILE: missing }, 20_000);
  expect(code).toBe(1);
  expect(output.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^Could not read the settings file ${missing} \\(ENV_FILE\\): ENOENT`))]);
});

/** What `make -n <target>` would run (its last line), with the settings file `file` and these variables. */
async function wouldRun(target: string, file: string, variables: string[] = [], env: Record<string, string> = {}): Promise<string> {
  const { PORT: _port, DATABASE_URL: _url, BASIC_AUTH_USERNAME: _user, BASIC_AUTH_PASSWORD: _password, BASIC_AUTH_PASSWORD_HASH: _hash, ...rest } = process.env;
  const { stdout } = await run('make', ['-n', '--no-print-directory', target, ...variables], { cwd: ROOT, env: { ...rest, ENV_FILE: file, ...env } });
  return stdout.trim().split('\n').at(-1)!.trim();
}

test("make run's development defaults yield to the settings file, and the command line and the environment to neither", async () => {
  const file = join(folder, '.env');
  writeFileSync(file, 'PORT=4555\nBASIC_AUTH_PASSWORD_HASH=scrypt$from-the-file\n');
  const withFile = await wouldRun('run', file);
  expect(withFile).not.toContain('PORT=');
  expect(withFile).not.toContain('BASIC_AUTH_PASSWORD=');
  expect(withFile).toContain("DATABASE_URL='sqlite:./data/users.sqlite'");
  expect(await wouldRun('run', file, ['PORT=7000'])).toContain("PORT='7000'");
  expect(await wouldRun('run', file, [], { PORT: '7001' })).toContain("PORT='7001'");
  const without = await wouldRun('run', '');
  expect(without).toContain("PORT='3000'");
  expect(without).toContain("BASIC_AUTH_PASSWORD='dev-password'");
  writeFileSync(file, 'DATABASE_URL=sqlite:./elsewhere.sqlite\n');
  expect(await wouldRun('migrate', file)).toBe('npm run --silent migrate');
});
