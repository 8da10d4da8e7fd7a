import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../support/ports.js';

// `make dev` as a developer runs it, on a terminal (under script(1), which gives it one): the server starts
// with readable log lines (pino-pretty), a change to a source rebuilds and restarts it, a change that does not
// compile leaves the last good server answering, and Ctrl-C stops everything. In a copy of the tree, so that
// its edits touch nothing else.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let tree: string;
let port: number;
let make: ReturnType<typeof spawn>;
let printed = '';

/** Resolves once the output after `from` (a length of it) matches, or rejects after `withinMs`. */
async function printedAfter(from: number, pattern: RegExp, withinMs = 120_000): Promise<string> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const match = pattern.exec(printed.slice(from));
    if (match) return match[0];
    if (Date.now() > deadline || make.exitCode !== null) throw new Error(`not printed within ${withinMs} ms: ${pattern}\n${printed}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
const health = () =>
  fetch(`http://127.0.0.1:${port}/healthz`).then(
    (response) => response.status,
    () => 0,
  );

beforeAll(async () => {
  tree = mkdtempSync(join(tmpdir(), 'user-records-dev-'));
  const files = execFileSync(
    'git',
    [
      'ls-files',
      '--cached',
      '--others',
      '--exclude-standard',
      'server',
      'generated',
      'openapi',
      'scripts',
      'Makefile',
      '.node-version',
      'package.json',
      'package-lock.json',
      'tsconfig.json',
      'tsconfig.build.json',
    ],
    { cwd: ROOT },
  )
    .toString()
    .trim()
    .split('\n');
  for (const file of files) {
    mkdirSync(dirname(join(tree, file)), { recursive: true });
    cpSync(join(ROOT, file), join(tree, file), { preserveTimestamps: true });
  }
  symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'));
  symlinkSync(join(ROOT, '.tools'), join(tree, '.tools'));
  port = await freePort();
  // The copy's packages are the repository's own (node_modules is a link to them): make must not install them.
  const command = `make --no-print-directory -o node_modules/.installed dev PORT=${port} DATABASE_URL=sqlite::memory: ENV_FILE=`;
  make = spawn('script', ['-qfec', command, '/dev/null'], { cwd: tree, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  make.stdout!.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  make.stderr!.on('data', (chunk: Buffer) => (printed += chunk.toString()));
}, 30_000);
afterAll(async () => {
  if (make.exitCode === null) process.kill(-make.pid!, 'SIGKILL');
  rmSync(tree, { recursive: true, force: true });
});

test('make dev starts the server with readable log lines on a terminal, not JSON', async () => {
  await printedAfter(0, /user records service listening/);
  expect(await health()).toBe(200);
  expect(printed).toMatch(/INFO.*user records service listening/);
  expect(printed).not.toContain('"msg":"user records service listening"');
}, 180_000);

test('a change to a source rebuilds and restarts the server, which runs it', async () => {
  const from = printed.length;
  appendFileSync(join(tree, 'server/main.ts'), "\nprocess.stdout.write('dev-loop: the edited build runs\\n');\n");
  await printedAfter(from, /\[dev\] built: restarting the server/);
  await printedAfter(from, /dev-loop: the edited build runs/);
  await printedAfter(from, /user records service listening/);
  expect(await health()).toBe(200);
}, 180_000);

test('a change that does not compile is reported, and the last good server goes on answering', async () => {
  const from = printed.length;
  appendFileSync(join(tree, 'server/main.ts'), "\nexport const notANumber: number = 'text';\n");
  await printedAfter(from, /error TS2322/);
  await printedAfter(from, /\[dev\] 1 compile error\(s\) above; the last good server keeps running/);
  expect(printed.slice(from)).not.toContain('restarting the server');
  expect(await health()).toBe(200);
}, 180_000);

test('Ctrl-C stops the server and the watcher', async () => {
  const exited = new Promise((resolve) => make.once('exit', resolve));
  make.stdin!.write('\x03'); // Ctrl-C, through the terminal script(1) gives make
  await exited;
  expect(await health()).toBe(0);
}, 60_000);
