import { createHash } from 'node:crypto';
import type { Principal } from '../../../generated/server/handlers.js';

/** Headers remembered: the one credential in the few spellings its clients send (`Basic`, `basic`, spaces). */
const REMEMBERED = 16;

/**
 * The Authorization headers that passed a full check, by their SHA-256 digest, with who they proved to be:
 * Basic credentials come with every request, and one a check has accepted needs no second check (no password
 * hash, no store writes of the throttle) while it stays what it was. Only a header that passed gets in, so a
 * stranger cannot fill it; keyed by digest, it holds no copy of a credential.
 * Bounded (the oldest goes first) and per process: a restart, as a change of the credential takes, empties it.
 */
export function createVerifiedCredentials(capacity: number = REMEMBERED) {
  const verified = new Map<string, Principal>();
  const digest = (header: string) => createHash('sha256').update(header, 'utf8').digest('base64');
  return {
    /** Who `header` proved to be, if it passed a check before. */
    recognise: (header: string): Principal | undefined => (header === '' || verified.size === 0 ? undefined : verified.get(digest(header))),
    /** Notes that `header` passed a check as `principal`. */
    remember(header: string, principal: Principal): void {
      const key = digest(header);
      verified.delete(key);
      verified.set(key, principal);
      if (verified.size > capacity) verified.delete(verified.keys().next().value!);
    },
  };
}

/** The memory createVerifiedCredentials builds. */
export type VerifiedCredentials = ReturnType<typeof createVerifiedCredentials>;
