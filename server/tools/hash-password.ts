import '../startup/supported-node.js';
import { hashPassword } from '../password-hash.js';

// Prints the scrypt hash of a password for BASIC_AUTH_PASSWORD_HASH: `printf %s 'secret' | npm run --silent hash-password`.
// The password is read from standard input, never from the command line, so it stays out of shell history.

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

const password = await readStdin();
if (password === '') {
  console.error('Give the password on standard input, e.g.: printf %s "secret" | npm run --silent hash-password');
  process.exit(1);
}
console.log(await hashPassword(password));
