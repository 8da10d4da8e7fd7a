import { readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import type { UserFields } from '../domain/user.js';
import { fromLocalUserInput } from '../handlers/shape-b.mapper.js';
import { toFieldErrors, type Contract } from '../http/contract/contract.js';
import { StartFailure } from './start-failure.js';

// The users a new store starts with instead of the demo users (USERS_FILE), as json-server and Mockoon start
// from a file of their own: a JSON array of shape B users without ids, checked against the contract's
// UserInput, as POST /users checks one. A file that does not pass stops the start with one line that says
// which users are wrong and why.

/** Users a file may hold: it is for demos and tests; a larger store is imported with SQL. */
export const MAX_FILE_USERS = 10_000;
/** Bytes a file may take: 10,000 users of 200-character names and 254-character addresses fit. */
const MAX_FILE_BYTES = 8 * 1024 * 1024;
/** Problems one start-up line lists. */
const LISTED_PROBLEMS = 5;

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
  if (!Array.isArray(users)) throw fail('must hold a JSON array of users, each {"firstName", "lastName", "email"}.');
  if (users.length > MAX_FILE_USERS) throw fail(`holds ${users.length} users; at most ${MAX_FILE_USERS}.`);
  const validate = contract.compile({ $ref: '#/components/schemas/UserInput' });
  const problems = users.flatMap((user, i) => (validate(user) ? [] : toFieldErrors(validate.errors).map((error) => `user ${i + 1}: ${error.path || '/'} ${error.message}`)));
  if (problems.length > 0) {
    const more = problems.length > LISTED_PROBLEMS ? ` (and ${problems.length - LISTED_PROBLEMS} more)` : '';
    throw fail(`does not match the contract's UserInput: ${problems.slice(0, LISTED_PROBLEMS).join('; ')}${more}.`);
  }
  // As POST /users takes them: the fields it stores, and nothing else.
  return (users as Parameters<typeof fromLocalUserInput>[0][]).map(fromLocalUserInput);
}
