import type { components } from '../../generated/api.js';
import type { AnyUserRecordsClient } from './client-types.js';
import { problemOf, type AnyOutcome } from './helper-answers.js';
import type { ClientPaths } from './paths.js';

// Reading a list a page at a time, as its `Link` header leads. Browser-safe.

/** The lists `pages` follows: shape A's numbered pages and shape B's list. */
export type ListPath = '/api/users' | '/users';
/** The query of a list, as its GET takes it. */
export type ListQuery<P extends ListPath> = NonNullable<ClientPaths[P]['get']['parameters']['query']>;
/** The headers of a list's page, as the contract declares and types them. */
type ListHeaders<P extends ListPath> = ClientPaths[P]['get']['responses'][200]['headers'];
/** One page of a list: its users in the shape of the path, the list's count, and the response they came in. */
export interface Page<P extends ListPath> {
  readonly items: P extends '/api/users' ? components['schemas']['DemoUser'][] : components['schemas']['User'][];
  /** How many users match the list's filters (`X-Total-Count`). */
  readonly total: ListHeaders<P>['X-Total-Count'];
  /** Whether `total` is the exact count, `eq`, or a lower bound, `gte` (`X-Total-Count-Relation`): a search stops counting. */
  readonly totalRelation: ListHeaders<P>['X-Total-Count-Relation'];
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
 *     for await (const { items, total } of pages(client, '/users', { limit: 100 })) render(items, total);
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
    const [total, totalRelation] = [outcome.headers['X-Total-Count'], outcome.headers['X-Total-Count-Relation']] as [
      Page<P>['total'],
      Page<P>['totalRelation'],
    ];
    yield { items, total, totalRelation, response: outcome.response };
    const next = nextLink(outcome.response);
    if (next === undefined || followed.has(next)) return;
    followed.add(next);
    params = Object.fromEntries(new URL(next, outcome.response.url || 'http://service.invalid').searchParams);
  }
}
