import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { contractCheckingFetch } from '../support/checking-fetch.js';
import { freePort } from '../support/prism.js';

// `make mock`, as the README tells frontend teams to run it, serves the contract on the port asked for.

const root = fileURLToPath(new URL('../..', import.meta.url));

async function waitForServing(url: string, deadline = Date.now() + 60_000): Promise<void> {
  while (Date.now() < deadline) {
    if (await fetch(url).then(() => true, () => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`nothing answered at ${url}`);
}

test.each([
  ['static examples', '', (body: any) => expect(body.data.first_name).toBe('Tobias')],
  ['generated data (MOCK_DYNAMIC=1)', 'MOCK_DYNAMIC=1', (body: any) => expect(typeof body.data.first_name).toBe('string')],
])('make mock serves %s', async (_case, flag, expectBody) => {
  const port = await freePort();
  // Its own process group, so that stopping it by PID stops make and the Prism it runs.
  const make = spawn('make', ['--no-print-directory', 'mock', `MOCK_PORT=${port}`, ...(flag ? [flag] : [])], { cwd: root, detached: true, stdio: 'ignore' });
  try {
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitForServing(`${baseUrl}/users`);
    const response = await contractCheckingFetch(baseUrl)(new Request(`${baseUrl}/api/users/2`));
    expect(response.status).toBe(200);
    expectBody(await response.json());
  } finally {
    process.kill(-make.pid!, 'SIGTERM');
  }
}, 90_000);
