import { createHash, timingSafeEqual } from 'node:crypto';
import type { Principal } from '../../generated/server/handlers.js';

/** Credentials as sent in an `Authorization: Basic` header (RFC 7617). */
export interface BasicCredentials {
  readonly username: string;
  readonly password: string;
}

const BASIC = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i;

/** Parses an Authorization header; undefined for anything that is not well-formed Basic credentials. */
export function parseBasicAuthorization(header: string | undefined): BasicCredentials | undefined {
  const encoded = header === undefined ? undefined : BASIC.exec(header)?.[1];
  if (encoded === undefined || encoded.length % 4 === 1) return undefined;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

// Digests have a fixed length, so timingSafeEqual can compare values of any length without leaking it.
const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/** Builds a check of an Authorization header against the configured credentials, in constant time. */
export function createBasicAuthenticator(expected: BasicCredentials): (header: string | undefined) => Principal | undefined {
  const username = digest(expected.username);
  const password = digest(expected.password);
  return (header) => {
    const given = parseBasicAuthorization(header) ?? { username: '', password: '' };
    // Both comparisons always run: an unknown user and a wrong password take the same time.
    const userMatches = timingSafeEqual(digest(given.username), username);
    const passwordMatches = timingSafeEqual(digest(given.password), password);
    return userMatches && passwordMatches ? { username: given.username } : undefined;
  };
}
