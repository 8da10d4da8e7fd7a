import type { components } from '../../generated/api.js';
import type { AnyUserRecordsClient } from './client-types.js';
import { problemOf, type AnyOutcome } from './helper-answers.js';
import type { Problem } from './outcome.js';

// Changing a user without losing another client's change: read, change, write back only if nobody wrote in
// between, and when someone did, say so rather than write over them. Browser-safe.

/** The paths of one user: shape A's and shape B's. */
export type UserPath = '/api/users/{id}' | '/users/{id}';
/** A user as the path's GET gives it. */
type StoredUser<P extends UserPath> = P extends '/api/users/{id}' ? components['schemas']['DemoUser'] : components['schemas']['User'];
/** A JSON Merge Patch of a user in the path's shape. */
type UserPatch<P extends UserPath> = P extends '/api/users/{id}' ? components['schemas']['DemoUserPatch'] : components['schemas']['UserPatch'];
/** What the path's PATCH answers. */
type PatchedUser<P extends UserPath> = P extends '/api/users/{id}' ? components['schemas']['DemoUserReplaced'] : components['schemas']['User'];

/** A user as the path's GET gives it, and the ETag it came with. */
export interface KnownUser<P extends UserPath> {
  readonly user: StoredUser<P>;
  readonly etag: string;
}

/** A user changed by changeUser: the PATCH's answer, the ETag of the new version, and how many tries it took. */
export interface ChangedUser<P extends UserPath> {
  readonly conflict: false;
  readonly user: PatchedUser<P>;
  /** Send it as `If-Match` next time, or give it back to changeUser as `known.etag`. */
  readonly etag: string;
  readonly attempts: number;
  readonly response: Response;
}

/** A change changeUser did not make, because another client changed the user first (412). */
export interface UserConflict<P extends UserPath> {
  readonly conflict: true;
  /** The user as the other client left it, and its ETag: show it, and give it back as `known` to change it after all. */
  readonly current: KnownUser<P>;
  /** The 412 problem, and its response. */
  readonly problem: Problem;
  readonly response: Response;
  readonly attempts: number;
}

/** What changeUser did: the change, or the conflict that stopped it, told apart by `conflict`. */
export type ChangeUserResult<P extends UserPath> = ChangedUser<P> | UserConflict<P>;

/**
 * changeUser's options: `known` skips the first read; `retry: true` asks `change` again with the other client's
 * version after a 412, up to `attempts` tries in all (3).
 */
export type ChangeUserOptions<P extends UserPath> = { readonly known?: KnownUser<P> } & (
  | { readonly retry?: false; readonly attempts?: never }
  | { readonly retry: true; readonly attempts?: number }
);

/** The user and its ETag, as the path's GET gives them; a problem throws. */
async function readUser<P extends UserPath>(client: AnyUserRecordsClient, path: P, id: number): Promise<KnownUser<P>> {
  const read = (await client.GET(path as '/users/{id}', { params: { path: { id } } })) as AnyOutcome;
  if (read.error !== undefined) throw problemOf(read);
  const user = (path === '/api/users/{id}' ? (read.data as { data: unknown }).data : read.data) as StoredUser<P>;
  return { user, etag: read.headers.ETag as string };
}

/**
 * Changes a user without overwriting anyone else's change (optimistic concurrency, RFC 9110 §13.1.1): reads the
 * user and its ETag, asks `change` for a merge patch of it (at once or as a promise), and sends the patch with
 * `If-Match`. When another client wrote in between (412), nothing is written: it reads the user again and
 * answers the conflict, `{ conflict: true, current: { user, etag } }`, for the caller to show or decide on. With
 * `retry: true` it asks `change` again with that user instead, up to `attempts` tries (3), before it answers the
 * conflict: only for a `change` that computes its patch from the user it is given, as a constant patch would
 * overwrite the other client's change. Any other problem throws a UserRecordsProblem. Give `known` (a user
 * and its ETag, as an earlier read, change or conflict returned them) to skip the first read.
 *
 *     const changed = await changeUser(client, '/users/{id}', 2, () => ({ lastName: 'Wren' }));
 *     if (changed.conflict) askWhatToKeep(changed.current.user);
 */
export async function changeUser<P extends UserPath>(
  client: AnyUserRecordsClient,
  path: P,
  id: number,
  change: (current: StoredUser<P>) => UserPatch<P> | Promise<UserPatch<P>>,
  options: ChangeUserOptions<P> = {},
): Promise<ChangeUserResult<P>> {
  const attempts = options.retry ? (options.attempts ?? 3) : 1;
  if (!Number.isInteger(attempts) || attempts < 1) throw new RangeError(`changeUser: attempts must be a whole number of at least 1 (got ${attempts})`);
  let current = options.known ?? (await readUser(client, path, id));
  for (let attempt = 1; ; attempt++) {
    const written = (await client.PATCH(path as '/users/{id}', {
      params: { path: { id }, header: { 'If-Match': current.etag } },
      body: (await change(current.user)) as components['schemas']['UserPatch'],
    })) as AnyOutcome;
    if (written.error === undefined)
      return { conflict: false, user: written.data as PatchedUser<P>, etag: written.headers.ETag as string, attempts: attempt, response: written.response };
    if (written.status !== 412) throw problemOf(written);
    current = await readUser(client, path, id);
    if (attempt >= attempts) return { conflict: true, current, problem: written.error as Problem, response: written.response, attempts: attempt };
  }
}
