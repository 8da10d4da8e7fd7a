// Runs once after every suite: the logs of the whole run must not hold a credential used by any test.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';

/** Passwords the suites send, in clear and as they travel in a Basic header. */
const SECRETS = ['correct horse battery staple', 'pässwörd ✓'].flatMap((password) => [
  password,
  Buffer.from(`tester:${password}`, 'utf8').toString('base64'),
  Buffer.from(`zoë:${password}`, 'utf8').toString('base64'),
]);

export default async function globalTeardown() {
  const file = process.env.TEST_LOG_FILE;
  if (!file || !existsSync(file)) return;
  const logs = readFileSync(file, 'utf8');
  const leaked = SECRETS.filter((secret) => logs.includes(secret));
  const lines = logs.split('\n').filter(Boolean).length;
  if (leaked.length > 0) throw new Error(`The server logs of this run (${file}) contain a credential: ${leaked.join(', ')}`);
  if (lines === 0) throw new Error(`No server logged anything to ${file}: the credential scan would prove nothing`);
  console.log(`\nScanned ${lines} log lines of this run: no credential found.`);
  rmSync(dirname(file), { recursive: true, force: true });
}
