import type { VersionCondition } from '../domain/user-repository.js';
import { MAX_STORED_NUMBER, type User } from '../domain/user.js';

/** The strong entity tag (RFC 9110 §8.8.3) of a user's current version: `"<version>"`. */
export const etagOf = (user: Pick<User, 'version'>) => `"${user.version}"`;

/** The entity tags of an If-Match or If-None-Match list, already checked against the contract's pattern. */
const entityTags = (header: string) => [...header.matchAll(/(W\/)?"([^"]*)"/g)].map(([, weak, tag = '']) => ({ weak: weak !== undefined, tag }));

/**
 * Reads an If-Match header, already checked against the contract's pattern, as the versions a change may
 * apply to. If-Match compares strongly (RFC 9110 §13.1.1): weak tags and tags that are not ours match nothing,
 * nor do versions past any a user can have (none left, the change is a 412 without asking the store).
 */
export function versionCondition(ifMatch: string | undefined): VersionCondition {
  if (ifMatch === undefined || ifMatch.trim() === '*') return 'any';
  return entityTags(ifMatch)
    .filter(({ weak, tag }) => !weak && /^[1-9]\d{0,9}$/.test(tag))
    .map(({ tag }) => Number(tag))
    .filter((version) => version <= MAX_STORED_NUMBER);
}

/**
 * Whether an If-None-Match header, already checked against the contract's pattern, names the user's current
 * version, so that a GET answers 304. It compares weakly (RFC 9110 §13.1.2): `W/"3"` matches `"3"`; `*`
 * matches any version of a user that exists.
 */
export function holdsCurrent(ifNoneMatch: string | undefined, user: Pick<User, 'version'>): boolean {
  if (ifNoneMatch === undefined) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const current = String(user.version);
  return entityTags(ifNoneMatch).some(({ tag }) => tag === current);
}
