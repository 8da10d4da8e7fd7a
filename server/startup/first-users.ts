import type { UserFields } from '../domain/user.js';
import { fromLocalUserInput } from '../handlers/shape-b.mapper.js';
import type { Contract } from '../http/contract/contract.js';
import { bodyErrors } from '../http/contract/request-validation.js';

// The users a new store starts with instead of the demo users, checked as POST /users checks one: from
// USERS_FILE (users-file.ts) or given to the MSW handlers (client/src/msw.ts). Browser-safe: no file system.

/** Users a store may start with: it is for demos and tests; a larger store is imported with SQL. */
export const MAX_FIRST_USERS = 10_000;
/** Problems one message lists. */
const LISTED_PROBLEMS = 5;

/**
 * The users of `value` (a JSON array of shape B users, as POST /users takes them), or what is wrong with it
 * in words: the first few wrong users and fields, e.g. `user 2: /email must be an e-mail address …`.
 */
export function checkFirstUsers(value: unknown, contract: Contract): { users: UserFields[] } | { problem: string } {
  if (!Array.isArray(value)) return { problem: 'must hold a JSON array of users, each {"firstName", "lastName", "email"}.' };
  if (value.length > MAX_FIRST_USERS) return { problem: `holds ${value.length} users; at most ${MAX_FIRST_USERS}.` };
  const validate = contract.compile({ $ref: '#/components/schemas/UserInput' });
  const problems = value.flatMap((user, i) => bodyErrors(validate, user).map((error) => `user ${i + 1}: ${error.path || '/'} ${error.message}`));
  if (problems.length > 0) {
    const more = problems.length > LISTED_PROBLEMS ? ` (and ${problems.length - LISTED_PROBLEMS} more)` : '';
    return { problem: `does not match the contract's UserInput: ${problems.slice(0, LISTED_PROBLEMS).join('; ')}${more}.` };
  }
  // As POST /users takes them: the fields it stores, and nothing else.
  return { users: (value as Parameters<typeof fromLocalUserInput>[0][]).map(fromLocalUserInput) };
}
