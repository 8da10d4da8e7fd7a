import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parsePasswordHash, verifyPassword } from '../../server/password-hash.js';
import { OLDEST_NODE_MAJOR } from '../../server/startup/supported-node.js';
import { freePort } from '../support/ports.js';

// The operator's commands (docs/deployment.md) as an operator runs them: through make, on a machine whose own
// Node may be older than the service supports (this one's is 20), and each entry point run on such a Node
// straight, which must say so in one line instead of crashing.

const root = fileURLToPath(new URL('../..', import.meta.url));
/** This machine's PATH without the folder of the Node the tests run on: `node` is the machine's own. */
const machinePath = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((folder) => folder !== dirname(process.execPath))
  .join(delimiter);

/** A Node on the machine's PATH older than the service supports, if there is one. */
function olderNode(): { path: string; version: string } | undefined {
  for (const folder of machinePath.split(delimiter)) {
    const path = join(folder, 'node');
    if (!existsSync(path)) continue;
    const version = execFileSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
    if (Number(version.split('.')[0]) < OLDEST_NODE_MAJOR) return { path, version };
  }
  return undefined;
}

/** Runs a command to its end; its exit code and what it printed on each stream. */
function run(
  file: string,
  args: string[],
  options: { env?: Record<string, string>; input?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: root, env: { PATH: machinePath, HOME: process.env.HOME ?? '', ...options.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

test("the entry points accept the Node lines package.json's engines names, and the pinned one", () => {
  const { engines } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
  expect(engines.node).toBe(`>=${OLDEST_NODE_MAJOR}`);
  expect(Number(readFileSync(join(root, '.node-version'), 'utf8').split('.')[0])).toBeGreaterThanOrEqual(OLDEST_NODE_MAJOR);
});

const older = olderNode();
(older ? describe : describe.skip)(`each entry point on Node ${older?.version ?? '(none older on this machine)'}`, () => {
  test.each([['dist/server/main.js'], ['dist/server/tools/migrate.js'], ['dist/server/tools/backup.js'], ['dist/server/tools/hash-password.js']])(
    '%s names the Node it needs and the one it found, in one line, and exits 1',
    async (entry) => {
      const result = await run(older!.path, [entry, 'backup', '/tmp/never.sqlite'], { env: { DATABASE_URL: 'sqlite:/tmp/never/users.sqlite' } });
      expect(result).toEqual({
        code: 1,
        stdout: '',
        stderr: `Could not start: this needs Node ${OLDEST_NODE_MAJOR} or newer, and ${older!.path} is Node ${older!.version}. Run it through make (make start, migrate, backup, restore, hash-password), which uses the Node that .node-version pins.\n`,
      });
      expect(existsSync('/tmp/never')).toBe(false);
    },
    30_000,
  );
});

describe("make's operator targets, on the machine's PATH", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'operator-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const make = (args: string[], options: { env?: Record<string, string>; input?: string } = {}) =>
    run('make', ['--no-print-directory', '-s', ...args], options);

  test('migrate, backup and restore a store, each in one line', async () => {
    const store = `sqlite:${join(dir, 'users.sqlite')}`;
    const migrated = await make(['migrate', `DATABASE_URL=${store}`]);
    expect(migrated).toMatchObject({ code: 0, stderr: '' });
    expect(migrated.stdout).toMatch(/"msg":"the store's schema is up to date"/);
    const backup = join(dir, 'backups', 'users.sqlite');
    const taken = await make(['backup', `DATABASE_URL=${store}`, `FILE=${backup}`]);
    expect(taken).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(taken.stdout)).toMatchObject({ backup, users: 0 });
    const restored = await make(['restore', `DATABASE_URL=${store}`, `FILE=${backup}`, 'NEXT_ID=50']);
    expect(restored).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(restored.stdout)).toMatchObject({ restored: backup, nextId: 50 });
  }, 120_000);

  test('backup and restore without FILE say how to name it', async () => {
    for (const target of ['backup', 'restore']) {
      const result = await make([target, `DATABASE_URL=sqlite:${join(dir, 'users.sqlite')}`]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`name the backup: make ${target} FILE=backups/users.sqlite`);
    }
  }, 60_000);

  test('hash-password prints the hash alone, of the password on standard input', async () => {
    const result = await make(['hash-password'], { input: 'an operator secret' });
    expect(result.code).toBe(0);
    const hash = parsePasswordHash(result.stdout.trim());
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    expect(hash && (await verifyPassword('an operator secret', hash))).toBe(true);
  }, 60_000);

  test('start serves with the settings of the environment alone', async () => {
    const port = await freePort();
    const started = spawn('make', ['--no-print-directory', 'start'], {
      cwd: root,
      detached: true,
      stdio: 'ignore',
      env: {
        PATH: machinePath,
        HOME: process.env.HOME ?? '',
        PORT: String(port),
        DATABASE_URL: `sqlite:${join(dir, 'users.sqlite')}`,
        BASIC_AUTH_USERNAME: 'operator',
        BASIC_AUTH_PASSWORD: 'an operator secret',
      },
    });
    try {
      const deadline = Date.now() + 60_000;
      let answer: Response | undefined;
      while (!answer && Date.now() < deadline) {
        answer = await fetch(`http://127.0.0.1:${port}/protected-resource`, {
          headers: { Authorization: `Basic ${Buffer.from('operator:an operator secret').toString('base64')}` },
        }).catch(() => undefined);
        if (!answer) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(answer?.status).toBe(200);
    } finally {
      process.kill(-started.pid!, 'SIGTERM');
    }
  }, 90_000);
});
