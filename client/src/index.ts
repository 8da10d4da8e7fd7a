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
