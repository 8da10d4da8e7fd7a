import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parsePasswordHash, verifyPassword } from '../../server/password-hash.js';
import { TEST_CREDENTIALS, withTestServer } from '../support/test-server.js';

// The documented command, `printf %s '…' | npm run --silent hash-password`, as an operator runs it.

const root = fileURLToPath(new URL('../..', import.meta.url));

test('npm run hash-password prints a hash the server accepts for that password only', async () => {
  const printed = execFileSync('npm', ['run', '--silent', 'hash-password'], { cwd: root, input: TEST_CREDENTIALS.password }).toString().trim();
  const hash = parsePasswordHash(printed);
  expect(hash).toBeDefined();
  expect(await verifyPassword(TEST_CREDENTIALS.password, hash!)).toBe(true);
  await withTestServer({ env: { BASIC_AUTH_PASSWORD_HASH: printed } }, async (_server, api) => {
    const basic = (password: string) => `Basic ${Buffer.from(`${TEST_CREDENTIALS.username}:${password}`).toString('base64')}`;
    expect((await api.get('/protected-resource', { headers: { authorization: basic(TEST_CREDENTIALS.password) } })).status).toBe(200);
    expect((await api.get('/protected-resource', { headers: { authorization: basic('nope') } })).status).toBe(401);
  });
});

test('without a password on standard input it explains itself and fails', () => {
  const run = spawnSync('npm', ['run', '--silent', 'hash-password'], { cwd: root, input: '' });
  expect(run.status).not.toBe(0);
  expect(run.stderr.toString()).toMatch(/standard input/);
});
