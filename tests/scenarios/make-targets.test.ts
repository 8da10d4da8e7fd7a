import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { contractCheckingFetch } from '../support/checking-fetch.js';
import { freePort } from '../support/ports.js';
import { SANDBOX_RESET } from '../support/sandbox-reset.js';
import { hashPassword } from '../../server/password-hash.js';

// `make mock` and `make sandbox`, as the README tells frontend teams to run them, serve on the port asked for.

const root = fileURLToPath(new URL('../..', import.meta.url));

async function waitForServing(url: string, deadline = Date.now() + 60_000): Promise<void> {
  while (Date.now() < deadline) {
    if (
      await fetch(url).then(
        () => true,
        () => false,
      )
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`nothing answered at ${url}`);
}

/** Runs `make <target> <variables>` in its own process group, so that stopping it by PID stops what make runs. */
function startMake(target: string, variables: string[], env: Record<string, string> = {}): { stop(): void } {
  const make = spawn('make', ['--no-print-directory', target, ...variables], { cwd: root, detached: true, stdio: 'ignore', env: { ...process.env, ...env } });
  return { stop: () => process.kill(-make.pid!, 'SIGTERM') };
}

test.each([
  ['static examples', '', (body: any) => expect(body.data.first_name).toBe('Tobias')],
  ['generated data (MOCK_DYNAMIC=1)', 'MOCK_DYNAMIC=1', (body: any) => expect(typeof body.data.first_name).toBe('string')],
])(
  'make mock serves %s',
  async (_case, flag, expectBody) => {
    const port = await freePort();
    const make = startMake('mock', [`MOCK_PORT=${port}`, ...(flag ? [flag] : [])]);
    try {
      const baseUrl = `http://127.0.0.1:${port}`;
      await waitForServing(`${baseUrl}/users`);
      const response = await contractCheckingFetch(baseUrl)(new Request(`${baseUrl}/api/users/2`));
      expect(response.status).toBe(200);
      expectBody(await response.json());
    } finally {
      make.stop();
    }
  },
  90_000,
);

test('make sandbox serves the demo data with its controls, on SANDBOX_PORT', async () => {
  const port = await freePort();
  const make = startMake('sandbox', [`SANDBOX_PORT=${port}`]);
  try {
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitForServing(`${baseUrl}/healthz`, Date.now() + 120_000);
    const check = contractCheckingFetch(baseUrl);
    await check(new Request(`${baseUrl}/users/3`, { method: 'DELETE' }));
    expect(((await (await check(new Request(`${baseUrl}/users`))).json()) as unknown[]).length).toBe(11);
    expect((await check(new Request(`${baseUrl}/__sandbox/reset`, SANDBOX_RESET))).status).toBe(204);
    expect(((await (await check(new Request(`${baseUrl}/users`))).json()) as unknown[]).length).toBe(12);
  } finally {
    make.stop();
  }
}, 150_000);

test('make help names every address literally', async () => {
  const help = await new Promise<string>((resolve, reject) => {
    const make = spawn('make', ['--no-print-directory', 'help'], { cwd: root });
    let out = '';
    make.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    make.once('error', reject);
    make.once('exit', () => resolve(out));
  });
  expect(help).toContain('make mock');
  expect(help).not.toContain('$(');
  expect(help).toMatch(/127\.0\.0\.1:4010/);
});

/** `make -q`: whether make would do nothing for the target (exit 0) or has work to do (exit 1); `-W` pretends a file changed. */
function upToDate(target: string, pretendChanged?: string): Promise<boolean> {
  const args = ['-q', ...(pretendChanged ? ['-W', pretendChanged] : []), target];
  return new Promise((resolve, reject) => {
    const make = spawn('make', args, { cwd: root, stdio: 'ignore' });
    make.on('error', reject);
    make.on('exit', (code) => resolve(code === 0));
  });
}

test('make run and make sandbox compile the server again only when a source changed', async () => {
  // make test built dist/ before the suites ran.
  expect(await upToDate('dist/.built')).toBe(true);
  for (const source of ['server/main.ts', 'generated/contract.ts', 'openapi/user-records.yaml', 'tsconfig.build.json']) {
    expect({ source, upToDate: await upToDate('dist/.built', source) }).toEqual({ source, upToDate: false });
  }
  expect(await upToDate('dist/.built', 'tests/unit/config.test.ts')).toBe(true);
});

test('make run takes a hashed password from the environment instead of the development one', async () => {
  const port = await freePort();
  const hash = await hashPassword('a hashed secret');
  // -o build: make test built dist/ already. The store in memory, so that nothing lands in ./data.
  const make = startMake('run', ['-o', 'build', `PORT=${port}`, 'DATABASE_URL=sqlite::memory:'], { BASIC_AUTH_PASSWORD_HASH: hash });
  try {
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitForServing(`${baseUrl}/healthz`);
    const as = (password: string) =>
      fetch(`${baseUrl}/protected-resource`, { headers: { Authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}` } });
    expect((await as('a hashed secret')).status).toBe(200);
    expect((await as('dev-password')).status).toBe(401);
  } finally {
    make.stop();
  }
}, 90_000);
