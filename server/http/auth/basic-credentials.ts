import { fromBase64 } from '../../domain/base64.js';
import { HttpProblem } from '../errors/problem.js';

// Reading Basic credentials and asking for them: browser-safe, so that the MSW handlers of the client package
// read them as the server does. Checking them against the configured user is basic-auth.ts (node:crypto).

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
  const decoded = fromBase64(encoded);
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

const CHALLENGE = 'Basic realm="user-records", charset="UTF-8"';

/** The 401 that asks for credentials, with its challenge. */
export const challenge = () => new HttpProblem('unauthorized', 'Valid HTTP Basic credentials are required.', { headers: { 'WWW-Authenticate': CHALLENGE } });
