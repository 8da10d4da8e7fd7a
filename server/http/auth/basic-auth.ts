import { createHash, timingSafeEqual } from 'node:crypto';
import type { Principal } from '../../../generated/server/handlers.js';
import { verifyPassword } from '../../password-hash.js';
import type { BasicSecret } from '../../config.js';
import type { BasicCredentials } from './basic-credentials.js';

// Digests have a fixed length, so timingSafeEqual can compare values of any length without leaking it.
const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
const sameText = (given: string, expected: Buffer) => timingSafeEqual(digest(given), expected);

/** The outcome of checking an Authorization header. */
export type BasicCheck = { readonly principal: Principal } | { readonly failedUsername: string };

/**
 * Builds the check of parsed Basic credentials against the configured user. The password check always
 * runs, whether the user is unknown or the password wrong, so that both failures take the same time and
 * reveal nothing about which part was wrong. (A missing or malformed header never gets here.)
 */
export function createBasicAuthenticator(expected: { username: string; secret: BasicSecret }): (given: BasicCredentials) => Promise<BasicCheck> {
  const username = digest(expected.username);
  const { secret } = expected;
  const passwordMatches =
    secret.kind === 'hash'
      ? (given: string) => verifyPassword(given, secret.hash)
      : (
          (password: Buffer) => async (given: string) =>
            sameText(given, password)
        )(digest(secret.password));
  return async (given) => {
    const userMatches = sameText(given.username, username);
    const passwordOk = await passwordMatches(given.password);
    return userMatches && passwordOk ? { principal: { username: given.username } } : { failedUsername: given.username };
  };
}
