import createClient, { type Client, type FetchResponse, type MaybeOptionalInit, type Middleware } from 'openapi-fetch';
import type { MediaType, PathsWithMethod, RequiredKeysOf } from 'openapi-typescript-helpers';
import type { components, paths } from '../../generated/api.js';
import { routes } from '../../generated/routes.js';

// Browser-safe on purpose: only fetch, TextEncoder and btoa, which Node 20 and every browser have.

export type { components, operations, paths } from '../../generated/api.js';

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';

/** What the compiler says of a path the contract does not have for the method called. */
type UnknownPath<M extends Method, P extends string> = `${P} is not a ${Uppercase<M>} path of the User Records Service`;
/** The path, if the contract has it for the method; otherwise the message above, which no string is. */
type KnownPath<M extends Method, P extends string> = P extends PathsWithMethod<paths, M> ? P : UnknownPath<M, P>;
type PathItem<M extends Method, P extends string> = P extends PathsWithMethod<paths, M> ? paths[P] : never;
/** The operation of the method on a path the contract has (openapi-fetch's `Paths[Path][Method]`). */
type OperationOf<M extends Method, P extends string> = Extract<PathItem<M, P>[M], Record<string | number, any>>;
/** openapi-fetch's rule for its `init` parameter: required when the operation has required parameters or a body. */
type InitParam<Init> = RequiredKeysOf<Init> extends never ? [(Init & { [key: string]: unknown })?] : [Init & { [key: string]: unknown }];

/**
 * openapi-fetch's method signature, with the path checked first: a path the contract does not have is an
 * error that names it (`/nope is not a GET path of the User Records Service`), where openapi-fetch said
 * only "Expected 2 arguments, but got 1".
 */
type CheckedMethod<M extends Method> = <P extends string, Init extends MaybeOptionalInit<PathItem<M, P>, M>>(
  url: KnownPath<M, P>,
  ...init: InitParam<Init>
) => Promise<FetchResponse<OperationOf<M, P>, Init, MediaType>>;

/** The typed client: `GET`, `POST`, `PUT`, `PATCH`, `DELETE` on the contract's paths, each returning `{ data, error, response }`. */
export type UserRecordsClient = Omit<Client<paths>, 'GET' | 'PUT' | 'POST' | 'DELETE' | 'PATCH'> & {
  GET: CheckedMethod<'get'>;
  PUT: CheckedMethod<'put'>;
  POST: CheckedMethod<'post'>;
  DELETE: CheckedMethod<'delete'>;
  PATCH: CheckedMethod<'patch'>;
};

/** An error response of the service (RFC 9457 problem details). */
export type Problem = components['schemas']['Problem'];

/** HTTP Basic credentials, issued out of band. */
export interface BasicCredentials {
  readonly username: string;
  readonly password: string;
}

/** Options of createUserRecordsClient. */
export interface UserRecordsClientOptions {
  /** Where the service is, including any base path: `http://127.0.0.1:3000`, or the mock at `http://127.0.0.1:4010`. */
  readonly baseUrl: string;
  /** Sent only to the operations whose security requires them (the protected resource). */
  readonly credentials?: BasicCredentials;
  /** A fetch of your own (for tests, proxies, instrumentation); by default globalThis.fetch, as it is at each call. */
  readonly fetch?: (request: Request) => Promise<Response>;
  /** Headers sent with every request, e.g. `{ 'x-custom-header': 'value' }`. */
  readonly headers?: Record<string, string>;
}

const securedOperations = new Set(routes.filter((route) => route.security.length > 0).map((route) => `${route.method} ${route.path}`));

/** `Basic base64(user:password)`, with the pair encoded as UTF-8 (RFC 7617 `charset="UTF-8"`). */
function basicAuthorization({ username, password }: BasicCredentials): string {
  if (username.includes(':')) throw new TypeError('A Basic user name cannot contain ":" (RFC 7617).');
  let binary = '';
  for (const byte of new TextEncoder().encode(`${username}:${password}`)) binary += String.fromCharCode(byte);
  return `Basic ${btoa(binary)}`;
}

/** Middleware that adds Basic credentials to the requests of secured operations, and to no others. */
export function basicAuthMiddleware(credentials: BasicCredentials): Middleware {
  const authorization = basicAuthorization(credentials);
  return {
    onRequest({ request, schemaPath }) {
      if (!securedOperations.has(`${request.method} ${schemaPath}`)) return undefined;
      request.headers.set('Authorization', authorization);
      return request;
    },
  };
}

/**
 * Creates a client of the User Records Service. Error statuses come back as `{ error: Problem, response }`;
 * only network failures throw. The protected resource answers text: call it with `parseAs: 'text'`.
 */
export function createUserRecordsClient(options: UserRecordsClientOptions): UserRecordsClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl,
    // Looked up at each call, not once here: a client made when a module loads, before a test's MSW (or any
    // other tool) replaces globalThis.fetch, still goes through it.
    fetch: options.fetch ?? ((request: Request) => globalThis.fetch(request)),
    ...(options.headers ? { headers: options.headers } : {}),
  });
  if (options.credentials) client.use(basicAuthMiddleware(options.credentials));
  // The same methods, typed so that an unknown path is an error that names it.
  return client as unknown as UserRecordsClient;
}

/** The lists `pages` follows: shape A's numbered pages and shape B's list. */
export type ListPath = '/api/users' | '/users';
/** The query of a list, as its GET takes it. */
export type ListQuery<P extends ListPath> = NonNullable<paths[P]['get']['parameters']['query']>;
/** One page of a list: its users, in the shape of the path, and the response they came in. */
export interface Page<P extends ListPath> {
  readonly items: P extends '/api/users' ? components['schemas']['DemoUser'][] : components['schemas']['User'][];
  readonly response: Response;
}

/** A problem the service answered where a helper needed data: its body, and the response. */
export class UserRecordsProblem extends Error {
  override readonly name = 'UserRecordsProblem';
  constructor(
    readonly problem: Problem,
    readonly response: Response,
  ) {
    super(`${response.status} ${problem.title}${problem.detail ? `: ${problem.detail}` : ''}`);
  }
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
export async function* pages<P extends ListPath>(client: UserRecordsClient, path: P, query?: ListQuery<P>, { maxPages = 1000 }: { maxPages?: number } = {}): AsyncGenerator<Page<P>, void, undefined> {
  const followed = new Set<string>();
  let params: Record<string, unknown> = { ...(query ?? {}) };
  for (let read = 0; read < maxPages; read++) {
    const result = (await client.GET(path as '/users', { params: { query: params } } as never)) as { data?: unknown; error?: Problem; response: Response };
    if (result.error !== undefined) throw new UserRecordsProblem(result.error, result.response);
    const items = (path === '/api/users' ? (result.data as { data: unknown[] }).data : result.data) as Page<P>['items'];
    yield { items, response: result.response };
    const next = nextLink(result.response);
    if (next === undefined || followed.has(next)) return;
    followed.add(next);
    params = Object.fromEntries(new URL(next, result.response.url || 'http://service.invalid').searchParams);
  }
}

