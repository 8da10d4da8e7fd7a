import { readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import type { UserFields } from '../domain/user.js';
import type { Contract } from '../http/contract/contract.js';
import { checkFirstUsers } from './first-users.js';
import { StartFailure } from './start-failure.js';

// The users a new store starts with instead of the demo users (USERS_FILE), as json-server and Mockoon start
// from a file of their own: a JSON array of shape B users without ids, checked as first-users.ts checks them.
// A file that does not pass stops the start with one line that says which users are wrong and why.

/** Bytes a file may take: 10,000 users of 200-character names and 254-character addresses fit. */
const MAX_FILE_BYTES = 8 * 1024 * 1024;

/** Reads and checks the users of the file, or throws a StartFailure that names what is wrong. */
export function readUsersFile(path: string, contract: Contract): UserFields[] {
  const name = `USERS_FILE ${basename(path)}`;
  const fail = (why: string) => new StartFailure(`Could not start: ${name} ${why}`);
  let text: string;
  try {
    if (statSync(path).size > MAX_FILE_BYTES) throw fail(`is larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB.`);
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (error instanceof StartFailure) throw error;
    throw fail(`cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`);
  }
  let users: unknown;
  try {
    users = JSON.parse(text);
  } catch (error) {
    throw fail(`is not JSON (${(error as Error).message}).`);
  }
  const checked = checkFirstUsers(users, contract);
  if ('problem' in checked) throw fail(checked.problem);
  return checked.users;
}
