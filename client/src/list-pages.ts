import type { components } from '../../generated/api.js';
import type { AnyUserRecordsClient } from './client-types.js';
import { problemOf, type AnyOutcome } from './helper-answers.js';
import type { ClientPaths } from './paths.js';

// Reading a list a page at a time, as its `Link` header leads: one page for a screen with Prev and Next
// (readPage), or every page in turn (pages). Browser-safe.

/** The lists: shape A's numbered pages and shape B's list. */
export type ListPath = '/api/users' | '/users';
/** The query of a list, as its GET takes it. */
export type ListQuery<P extends ListPath> = NonNullable<ClientPaths[P]['get']['parameters']['query']>;
/** The headers of a list's page, as the contract declares and types them. */
type ListHeaders<P extends ListPath> = ClientPaths[P]['get']['responses'][200]['headers'];

/**
 * The pages beside a page, each as the query that reads it, from the relations the contract gives each list's
 * `Link`: shape A's `first`, `prev`, `next` and `last` (with `page`, `per_page` and a `cursor`), shape B's
 * `next` alone (`limit` and a `cursor`). A relation the answer does not give is undefined.
 */
export type PageLinks<P extends ListPath> = P extends '/api/users'
  ? { readonly first?: ListQuery<P>; readonly prev?: ListQuery<P>; readonly next?: ListQuery<P>; readonly last?: ListQuery<P> }
  : { readonly next?: ListQuery<P> };

/** One page of a list: its users in the shape of the path, the list's count, the pages beside it, and the response. */
export type Page<P extends ListPath> = PageLinks<P> & {
  readonly items: P extends '/api/users' ? components['schemas']['DemoUser'][] : components['schemas']['User'][];
  /** How many users match the list's filters (`X-Total-Count`). */
  readonly total: ListHeaders<P>['X-Total-Count'];
  /** Whether `total` is the exact count, `eq`, or a lower bound, `gte` (`X-Total-Count-Relation`): a search stops counting. */
  readonly totalRelation: ListHeaders<P>['X-Total-Count-Relation'];
  readonly response: Response;
};

/** The relations of a list's links; `Link` may carry others, which no list defines. */
const RELATIONS: ReadonlySet<string> = new Set(['first', 'prev', 'next', 'last']);
/** The lists' query parameters that are integers (a test keeps them those of the contract): a link's are text. */
export const integerParameters: ReadonlySet<string> = new Set(['page', 'per_page', 'limit']);

/** The query of each relation a `Link` header (RFC 8288) names, its targets resolved against the response's URL. */
function linkQueries(response: Response): Record<string, Record<string, string | number>> {
  const found: Record<string, Record<string, string | number>> = {};
  for (const part of (response.headers.get('link') ?? '').split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (!match) continue;
    const params = new URL(match[1]!, response.url || 'http://service.invalid').searchParams;
    const query = Object.fromEntries([...params].map(([name, value]) => [name, integerParameters.has(name) ? Number(value) : value]));
    for (const relation of (/;\s*rel="?([^";]*)"?/i.exec(`;${match[2]}`)?.[1] ?? '').toLowerCase().split(/\s+/))
      if (RELATIONS.has(relation) && !(relation in found)) found[relation] = query;
  }
  return found;
}

/**
 * One page of a list, as `query` asks: its users, `total` and `totalRelation`, and the queries of the pages
 * beside it (`next`, and in shape A `prev`, `first` and `last`), to give back to readPage for Next and Prev.
 * Shape B's list links `next` only: keep the queries you came by to go back. A problem answer throws a
 * UserRecordsProblem.
 *
 *     const page = await readPage(client, '/api/users', { per_page: 10 });
 *     const later = page.next && (await readPage(client, '/api/users', page.next));
 */
export async function readPage<P extends ListPath>(client: AnyUserRecordsClient, path: P, query?: ListQuery<P>): Promise<Page<P>> {
  const outcome = (await client.GET(path as '/users', { params: { query: query ?? {} } } as never)) as AnyOutcome;
  if (outcome.error !== undefined) throw problemOf(outcome);
  return {
    ...linkQueries(outcome.response),
    items: path === '/api/users' ? (outcome.data as { data: unknown[] }).data : outcome.data,
    total: outcome.headers['X-Total-Count'],
    totalRelation: outcome.headers['X-Total-Count-Relation'],
    response: outcome.response,
  } as Page<P>;
}

/**
 * Every page of a list, in order: the first as `query` asks, then each `next` the answers link, until one
 * links none. Shape B's list is one page unless `limit` is set. Ends too at a next page already read (a mock
 * such as Prism offers the same one on every answer) and after `maxPages` (1,000). Each page is readPage's.
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
  let next = query;
  for (let read = 0; read < maxPages; read++) {
    const page: Page<P> = await readPage(client, path, next);
    yield page;
    next = page.next;
    if (next === undefined || followed.has(JSON.stringify(next))) return;
    followed.add(JSON.stringify(next));
  }
}
