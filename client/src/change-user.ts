import type { components } from '../../generated/api.js';
import type { AnyUserRecordsClient } from './client-types.js';
import { problemOf, type AnyOutcome } from './helper-answers.js';

// Changing a user without losing another client's change: read, change, write back only if nobody wrote in
// between. Browser-safe.

/** The paths of one user: shape A's and shape B's. */
export type UserPath = '/api/users/{id}' | '/users/{id}';
/** A user as the path's GET gives it. */
type StoredUser<P extends UserPath> = P extends '/api/users/{id}' ? components['schemas']['DemoUser'] : components['schemas']['User'];
/** A JSON Merge Patch of a user in the path's shape. */
type UserPatch<P extends UserPath> = P extends '/api/users/{id}' ? components['schemas']['DemoUserPatch'] : components['schemas']['UserPatch'];
/** What the path's PATCH answers. */
type PatchedUser<P extends UserPath> = P extends '/api/users/{id}' ? components['schemas']['DemoUserReplaced'] : components['schemas']['User'];

/** A user changed by changeUser: the PATCH's answer, the ETag of the new version, and how many tries it took. */
export interface ChangedUser<P extends UserPath> {
  readonly user: PatchedUser<P>;
  /** Send it as `If-Match` next time, or give it back to changeUser as `known.etag`. */
  readonly etag: string;
  readonly attempts: number;
  readonly response: Response;
}

/**
 * Changes a user without overwriting anyone else's change (optimistic concurrency, RFC 9110 §13.1.1): reads the
 * user and its ETag, asks `change` for a merge patch of it (at once or as a promise), and sends the patch with `If-Match`. When another
 * client wrote in between (412), it reads the new version and asks `change` again, up to `attempts` times (3);
 * then, or at any other problem, it throws a UserRecordsProblem. Give `known` (a user and the ETag it came with,
 * as an earlier read or change returned them) to skip the first read.
 *
 *     const { etag } = await changeUser(client, '/users/{id}', 2, (user) => ({ lastName: user.lastName.toUpperCase() }));
 */
export async function changeUser<P extends UserPath>(
  client: AnyUserRecordsClient,
  path: P,
  id: number,
  change: (current: StoredUser<P>) => UserPatch<P> | Promise<UserPatch<P>>,
  { attempts = 3, known }: { attempts?: number; known?: { readonly user: StoredUser<P>; readonly etag: string } } = {},
): Promise<ChangedUser<P>> {
  if (!Number.isInteger(attempts) || attempts < 1) throw new RangeError(`changeUser: attempts must be a whole number of at least 1 (got ${attempts})`);
  let current = known;
  for (let attempt = 1; ; attempt++) {
    if (current === undefined) {
      const read = (await client.GET(path as '/users/{id}', { params: { path: { id } } })) as AnyOutcome;
      if (read.error !== undefined) throw problemOf(read);
      const user = (path === '/api/users/{id}' ? (read.data as { data: unknown }).data : read.data) as StoredUser<P>;
      current = { user, etag: read.headers.ETag as string };
    }
    const written = (await client.PATCH(path as '/users/{id}', {
      params: { path: { id }, header: { 'If-Match': current.etag } },
      body: (await change(current.user)) as components['schemas']['UserPatch'],
    })) as AnyOutcome;
    if (written.error === undefined)
      return { user: written.data as PatchedUser<P>, etag: written.headers.ETag as string, attempts: attempt, response: written.response };
    if (written.status !== 412 || attempt >= attempts) throw problemOf(written);
    current = undefined;
  }
}
