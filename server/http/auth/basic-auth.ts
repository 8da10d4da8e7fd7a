import { createHash, timingSafeEqual } from 'node:crypto';
import type { Principal } from '../../../generated/server/handlers.js';
import { verifyPassword } from '../../auth/password-hash.js';
import type { BasicSecret } from '../../config.js';

/** Credentials as sent in an `Authorization: Basic` header (RFC 7617). */
export interface BasicCredentials {
  readonly username: string;
  readonly password: string;
}

const BASIC = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i;
/** Longer credentials are refused unread: no hashing of megabytes on behalf of a stranger. */
const MAX_ENCODED_LENGTH = 4096;

/** Parses an Authorization header; undefined for anything that is not well-formed Basic credentials. */
export function parseBasicAuthorization(header: string | undefined): BasicCredentials | undefined {
  if (header === undefined || header.length > MAX_ENCODED_LENGTH) return undefined;
  const encoded = BASIC.exec(header)?.[1];
  if (encoded === undefined || encoded.length % 4 === 1) return undefined;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

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
      : ((password: Buffer) => async (given: string) => sameText(given, password))(digest(secret.password));
  return async (given) => {
    const userMatches = sameText(given.username, username);
    const passwordOk = await passwordMatches(given.password);
    return userMatches && passwordOk ? { principal: { username: given.username } } : { failedUsername: given.username };
  };
}
