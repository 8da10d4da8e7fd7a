import type { components } from '../../generated/api.js';
import type { AnyUserRecordsClient } from './client-types.js';
import type { Problem } from './outcome.js';
import type { ClientPaths } from './paths.js';

// What frontends do with the client again and again: read every page of a list, and change a user without
// losing another client's change (read, change, write back only if nobody wrote in between). Browser-safe.

/** A problem the service answered where a helper needed data: its body, the response, and `retryAfter` if it said. */
export class UserRecordsProblem extends Error {
  override readonly name = 'UserRecordsProblem';
  constructor(
    readonly problem: Problem,
    readonly response: Response,
    /** Seconds the answer asked to wait before trying again (`Retry-After`), when it did. */
    readonly retryAfter?: number,
  ) {
    super(`${response.status} ${problem.title}${problem.detail ? `: ${problem.detail}` : ''}`);
  }
}

/** An answer of the client, as a helper reads it. */
interface AnyOutcome {
  readonly status: number;
  readonly data?: unknown;
  readonly error?: unknown;
  readonly headers: Record<string, unknown>;
  readonly response: Response;
  readonly retryAfter?: number;
}
const problemOf = (outcome: AnyOutcome) => new UserRecordsProblem(outcome.error as Problem, outcome.response, outcome.retryAfter);

/** The lists `pages` follows: shape A's numbered pages and shape B's list. */
export type ListPath = '/api/users' | '/users';
/** The query of a list, as its GET takes it. */
export type ListQuery<P extends ListPath> = NonNullable<ClientPaths[P]['get']['parameters']['query']>;
/** One page of a list: its users, in the shape of the path, and the response they came in. */
export interface Page<P extends ListPath> {
  readonly items: P extends '/api/users' ? components['schemas']['DemoUser'][] : components['schemas']['User'][];
  readonly response: Response;
}

/** The target of a `Link` header's `rel="next"`, if it has one. */
function nextLink(response: Response): string | undefined {
  for (const part of (response.headers.get('link') ?? '').split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    const relations = match ? (/;\s*rel="?([^";]*)"?/i.exec(`;${match[2]}`)?.[1] ?? '').split(/\s+/) : [];
    if (relations.includes('next')) return match![1];
  }
  return undefined;
}

/**
 * Every page of a list, in order: the first as `query` asks, then each `Link: rel="next"` the answers give,
 * until one gives none. Shape B's list is one page unless `limit` is set. Ends too at a next page already
 * read (a mock such as Prism offers the same one on every answer) and after `maxPages` (1,000). A problem
 * answer throws a UserRecordsProblem.
 *
 *     for await (const { items } of pages(client, '/users', { limit: 100 })) render(items);
 */
export async function* pages<P extends ListPath>(
  client: AnyUserRecordsClient,
  path: P,
  query?: ListQuery<P>,
  { maxPages = 1000 }: { maxPages?: number } = {},
): AsyncGenerator<Page<P>, void, undefined> {
  const followed = new Set<string>();
  let params: Record<string, unknown> = { ...(query ?? {}) };
  for (let read = 0; read < maxPages; read++) {
    const outcome = (await client.GET(path as '/users', { params: { query: params } } as never)) as AnyOutcome;
    if (outcome.error !== undefined) throw problemOf(outcome);
    const items = (path === '/api/users' ? (outcome.data as { data: unknown[] }).data : outcome.data) as Page<P>['items'];
    yield { items, response: outcome.response };
    const next = nextLink(outcome.response);
    if (next === undefined || followed.has(next)) return;
    followed.add(next);
    params = Object.fromEntries(new URL(next, outcome.response.url || 'http://service.invalid').searchParams);
  }
}

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
