import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { httpClient } from '../support/http-client.js';
import { SANDBOX_RESET } from '../support/sandbox-reset.js';
import { startTestServer } from '../support/test-server.js';
import { destination } from 'pino';

// USERS_FILE: the users a new store starts with instead of the demo users, as json-server starts from its
// db.json; checked against the contract as POST /users checks a user, and restored by a sandbox reset.

const dir = mkdtempSync(join(tmpdir(), 'users-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes a file of users (or of any text) and returns its path. */
function usersFile(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

const TEAM = [
  { firstName: 'Grace', lastName: 'Hopper', email: 'grace@navy.example' },
  { firstName: 'Alan', lastName: 'Turing', email: 'alan@bletchley.example' },
  { firstName: 'Katherine', lastName: 'Johnson', email: 'katherine@nasa.example' },
];

test("a new store starts with the file's users, ids from 1 in its order, instead of the demo users", async () => {
  const server = await startTestServer({ env: { SEED_DEMO_DATA: 'true', USERS_FILE: usersFile('team.json', TEAM) } });
  try {
    const api = httpClient(server.url);
    const users = await api.get('/users');
    expect(users.body).toEqual(TEAM.map((user, i) => ({ id: i + 1, ...user })));
  } finally {
    await server.cleanup();
  }
});

test('a store that had its first users already: USERS_FILE is not used, and the start says so', async () => {
  const first = await startTestServer({ env: { SEED_DEMO_DATA: 'true' } });
  await first.stop();
  const log = join(dir, 'second.log');
  const path = usersFile('late.json', TEAM);
  const second = await startTestServer({
    store: first.store,
    env: { SEED_DEMO_DATA: 'true', USERS_FILE: path },
    logTo: destination({ dest: log, sync: true }),
  });
  try {
    expect(((await httpClient(second.url).get('/users')).body as unknown[]).length).toBe(12);
    const warned = readFileSync(log, 'utf8')
      .split('\n')
      .filter((line) => line.includes('USERS_FILE is not used'))
      .map((line) => JSON.parse(line) as { level: number; usersFile: string; msg: string });
    expect(warned).toEqual([
      expect.objectContaining({
        level: 40,
        usersFile: path,
        msg: 'USERS_FILE is not used: this store was given its first users before, and a store gets them once in its life. To start from the file, use a new store (another DATABASE_URL, or remove the SQLite file)',
      }),
    ]);
  } finally {
    await second.cleanup();
  }
});

test("the sandbox resets to the file's users", async () => {
  const server = await startTestServer({ env: { SANDBOX: 'true', DATABASE_URL: 'sqlite::memory:', USERS_FILE: usersFile('sandbox.json', TEAM) } });
  try {
    const api = httpClient(server.url);
    await api.delete('/users/2');
    await api.post('/users', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' });
    expect((await fetch(`${server.url}/__sandbox/reset`, SANDBOX_RESET)).status).toBe(204);
    expect((await api.get('/users')).body).toEqual(TEAM.map((user, i) => ({ id: i + 1, ...user })));
  } finally {
    await server.cleanup();
  }
});

test.each([
  [
    'users that break the contract',
    'bad.json',
    [TEAM[0], { firstName: 'Alan', email: 'not-an-address' }, { ...TEAM[2], admin: true }],
    /^Could not start: USERS_FILE bad\.json does not match the contract's UserInput: user 2: \/lastName is required; user 2: \/email must be an e-mail address such as .*; user 3: \/admin is not allowed\.$/,
  ],
  ['text that is not JSON', 'broken.json', '[{"firstName": "Grace",', /^Could not start: USERS_FILE broken\.json is not JSON \(.+\)\.$/],
  ['JSON that is not a list', 'object.json', { users: TEAM }, /^Could not start: USERS_FILE object\.json must hold a JSON array of users/],
])('%s: the start stops with one line that says what is wrong', async (_case, name, content, line) => {
  await expect(startTestServer({ env: { USERS_FILE: usersFile(name, content) } })).rejects.toThrow(line);
});

test('a file that is not there: the start stops and names it', async () => {
  await expect(startTestServer({ env: { USERS_FILE: join(dir, 'missing.json') } })).rejects.toThrow(
    'Could not start: USERS_FILE missing.json cannot be read (ENOENT).',
  );
});
