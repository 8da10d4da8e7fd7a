import createClient, { type Middleware } from 'openapi-fetch';
import { routes } from '../../generated/routes.js';
import { toOutcome } from './outcome.js';
import type { AnyPaths, Method, UserRecordsClient } from './client-types.js';
import type { ClientPaths, SandboxClientPaths } from './paths.js';

// Browser-safe on purpose: only fetch, TextEncoder and btoa, which Node 20 and every browser have.

export type { components, operations, paths } from '../../generated/api.js';
export type { Outcome, Problem, ProblemType } from './outcome.js';
export { retryAfterSeconds } from './outcome.js';
export { sortFields, type ClientPaths, type DemoSort, type LocalSort, type SandboxClientPaths, type SortOf } from './paths.js';
export type { AnyUserRecordsClient, UserRecordsClient } from './client-types.js';
export { changeUser, pages, UserRecordsProblem, type ChangedUser, type ListPath, type ListQuery, type Page, type UserPath } from './helpers.js';
export {
  preferFor,
  readPage,
  type ChangeUserOptions,
  type ChangeUserResult,
  type KnownUser,
  type PageLinks,
  type PreferenceOf,
  type Preferences,
  type SandboxOperation,
  type UserConflict,
} from './helpers.js';

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

const operationIds = new Map<string, string>(routes.map((route) => [`${route.method} ${route.path}`, route.operationId]));
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
 * Creates a client of the User Records Service. Every answer comes back as an Outcome: `{ status, data, headers,
 * response }` for a success, `{ status, error, headers, response }` with the Problem for an error status (and
 * `retryAfter` in seconds where the answer says when to try again), `{ status: 304, notModified: true }` for a
 * conditional GET whose ETag still holds. Only network failures throw. The protected resource answers text:
 * call it with `parseAs: 'text'`.
 */
export function createUserRecordsClient(options: UserRecordsClientOptions): UserRecordsClient {
  return createTypedClient<ClientPaths>(options);
}

/**
 * Creates a client of the sandbox (`make sandbox`, `npx user-records-sandbox`), the MSW handlers or the Prism
 * mock: createUserRecordsClient's, typed with the sandbox's controls too. Every operation takes `delay` (seconds
 * the answer is held back) and the `Prefer` header (`code=404`: the contract's example for that status), and
 * `POST /__sandbox/reset` restores the demo data. A server not in sandbox mode has none of them.
 */
export function createSandboxClient(options: UserRecordsClientOptions): UserRecordsClient<SandboxClientPaths> {
  return createTypedClient<SandboxClientPaths>(options);
}

function createTypedClient<Paths extends AnyPaths>(options: UserRecordsClientOptions): UserRecordsClient<Paths> {
  const client = createClient<ClientPaths>({
    baseUrl: options.baseUrl,
    // Looked up at each call, not once here: a client made when a module loads, before a test's MSW (or any
    // other tool) replaces globalThis.fetch, still goes through it.
    fetch: options.fetch ?? ((request: Request) => globalThis.fetch(request)),
    ...(options.headers ? { headers: options.headers } : {}),
  });
  if (options.credentials) client.use(basicAuthMiddleware(options.credentials));
  const call =
    (method: Uppercase<Method>) =>
    async (url: string, init?: object): Promise<unknown> =>
      toOutcome(
        operationIds.get(`${method} ${url}`) ?? '',
        await (client[method] as (url: string, init?: object) => Promise<{ response: Response }>)(url, init),
      );
  // The same methods, each answer an Outcome; typed so that an unknown path or member is an error that names it.
  return {
    use: client.use,
    eject: client.eject,
    GET: call('GET'),
    PUT: call('PUT'),
    POST: call('POST'),
    DELETE: call('DELETE'),
    PATCH: call('PATCH'),
  } as unknown as UserRecordsClient<Paths>;
}
