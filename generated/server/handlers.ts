// Generated from generated/user-records.sandbox.yaml (the contract with its sandbox overlay) by `make generate` (openapi-generator, openapi/templates/apis.index.mustache).
// Do not edit: change the contract or the template and regenerate.
import type { operations } from '../sandbox-api.js';
import type { OperationId, SecuredOperationId } from '../routes.js';

/** The name of a query parameter if it has a default; the generator gives parameters without one `undefined`. */
type Defaulted<Name extends string, Default> = [Default] extends [undefined] ? never : Name;

/** Query parameters the contract gives a default: always present once a request is validated. */
export interface DefaultedQueryParams {
  getHealth: Defaulted<'delay', undefined> | never;
  getMetrics: Defaulted<'delay', undefined> | never;
  getReadiness: Defaulted<'delay', undefined> | never;
  getDemoProtectedResource: Defaulted<'delay', undefined> | never;
  getProtectedResource: Defaulted<'delay', undefined> | never;
  resetSandbox: Defaulted<'delay', undefined> | never;
  createDemoUser: Defaulted<'delay', undefined> | never;
  deleteDemoUser: Defaulted<'delay', undefined> | never;
  getDemoUser: Defaulted<'delay', undefined> | never;
  listDemoUsers: Defaulted<'page', 1> | Defaulted<'per_page', 6> | Defaulted<'q', undefined> | Defaulted<'email', undefined> | Defaulted<'sort', undefined> | Defaulted<'cursor', undefined> | Defaulted<'delay', undefined> | never;
  patchDemoUser: Defaulted<'delay', undefined> | never;
  replaceDemoUser: Defaulted<'delay', undefined> | never;
  createUser: Defaulted<'delay', undefined> | never;
  deleteUser: Defaulted<'delay', undefined> | never;
  getUser: Defaulted<'delay', undefined> | never;
  listUsers: Defaulted<'q', undefined> | Defaulted<'email', undefined> | Defaulted<'sort', undefined> | Defaulted<'limit', undefined> | Defaulted<'cursor', undefined> | Defaulted<'delay', undefined> | never;
  patchUser: Defaulted<'delay', undefined> | never;
  replaceUser: Defaulted<'delay', undefined> | never;
}

type Defined<T> = [T] extends [undefined] ? Record<string, never> : Exclude<T, undefined>;
type WithRequired<T, K extends PropertyKey> = T & { [P in K & keyof T]-?: Exclude<T[P], undefined> };
type JsonContent<T> = T extends { content: { 'application/json': infer B } } ? B : undefined;

/** The identity established by a security scheme. */
export interface Principal {
  readonly username: string;
}

/** What a handler receives: validated and coerced parameters, headers and body. */
export interface RequestOf<Id extends OperationId> {
  readonly path: Defined<operations[Id]['parameters']['path']>;
  readonly query: WithRequired<Defined<operations[Id]['parameters']['query']>, DefaultedQueryParams[Id]>;
  /** Declared header parameters, under the names the contract gives them (e.g. `If-Match`). */
  readonly header: Defined<operations[Id]['parameters']['header']>;
  readonly body: JsonContent<operations[Id]['requestBody']>;
  readonly principal: Id extends SecuredOperationId ? Principal : undefined;
  /** Who sent the request: its normalised address, as the per-client limits count it. */
  readonly client: string;
  /** Aborts when the client goes away before its answer is complete: work done only for that answer may stop. */
  readonly signal: AbortSignal;
}

type ResponseContent<R> = R extends { content: infer C } ? C[keyof C] : undefined;
/** A JSON array may also be handed over as an async iterable, which the HTTP layer streams item by item. */
type Streamable<B> = B extends readonly (infer Item)[] ? B | AsyncIterable<Item> : B;

/** One declared response of an operation: its status, its body and any headers it sets. */
export type Reply<Id extends OperationId, Status extends keyof operations[Id]['responses']> =
  ResponseContent<operations[Id]['responses'][Status]> extends undefined
    ? { readonly status: Status; readonly body?: undefined; readonly headers?: Readonly<Record<string, string>> }
    : { readonly status: Status; readonly body: Streamable<ResponseContent<operations[Id]['responses'][Status]>>; readonly headers?: Readonly<Record<string, string>> };

/** The server side of the contract: one method per operationId, returning one of its declared responses. */
export interface UserRecordsHandlers {
  /** GET /healthz: Liveness - the process is up and serving */
  getHealth(request: RequestOf<'getHealth'>): Promise<
    | Reply<'getHealth', 200>
    | Reply<'getHealth', 400>
    | Reply<'getHealth', 408>
    | Reply<'getHealth', 417>
    | Reply<'getHealth', 421>
    | Reply<'getHealth', 431>
    | Reply<'getHealth', 500>
    | Reply<'getHealth', 503>
  >;
  /** GET /metrics: Metrics in the Prometheus text format */
  getMetrics(request: RequestOf<'getMetrics'>): Promise<
    | Reply<'getMetrics', 200>
    | Reply<'getMetrics', 400>
    | Reply<'getMetrics', 408>
    | Reply<'getMetrics', 417>
    | Reply<'getMetrics', 421>
    | Reply<'getMetrics', 431>
    | Reply<'getMetrics', 500>
    | Reply<'getMetrics', 503>
  >;
  /** GET /readyz: Readiness - a request sent now would be served */
  getReadiness(request: RequestOf<'getReadiness'>): Promise<
    | Reply<'getReadiness', 200>
    | Reply<'getReadiness', 400>
    | Reply<'getReadiness', 408>
    | Reply<'getReadiness', 417>
    | Reply<'getReadiness', 421>
    | Reply<'getReadiness', 431>
    | Reply<'getReadiness', 500>
    | Reply<'getReadiness', 503>
  >;
  /** GET /api/protected-resource: Read the protected resource (shape A prefix) */
  getDemoProtectedResource(request: RequestOf<'getDemoProtectedResource'>): Promise<
    | Reply<'getDemoProtectedResource', 200>
    | Reply<'getDemoProtectedResource', 400>
    | Reply<'getDemoProtectedResource', 401>
    | Reply<'getDemoProtectedResource', 408>
    | Reply<'getDemoProtectedResource', 417>
    | Reply<'getDemoProtectedResource', 421>
    | Reply<'getDemoProtectedResource', 429>
    | Reply<'getDemoProtectedResource', 431>
    | Reply<'getDemoProtectedResource', 500>
    | Reply<'getDemoProtectedResource', 503>
  >;
  /** GET /protected-resource: Read the protected resource */
  getProtectedResource(request: RequestOf<'getProtectedResource'>): Promise<
    | Reply<'getProtectedResource', 200>
    | Reply<'getProtectedResource', 400>
    | Reply<'getProtectedResource', 401>
    | Reply<'getProtectedResource', 408>
    | Reply<'getProtectedResource', 417>
    | Reply<'getProtectedResource', 421>
    | Reply<'getProtectedResource', 429>
    | Reply<'getProtectedResource', 431>
    | Reply<'getProtectedResource', 500>
    | Reply<'getProtectedResource', 503>
  >;
  /** POST /__sandbox/reset: Restore the demo data (sandbox only) */
  resetSandbox(request: RequestOf<'resetSandbox'>): Promise<
    | Reply<'resetSandbox', 204>
    | Reply<'resetSandbox', 400>
    | Reply<'resetSandbox', 404>
    | Reply<'resetSandbox', 408>
    | Reply<'resetSandbox', 413>
    | Reply<'resetSandbox', 415>
    | Reply<'resetSandbox', 417>
    | Reply<'resetSandbox', 422>
    | Reply<'resetSandbox', 431>
    | Reply<'resetSandbox', 500>
    | Reply<'resetSandbox', 503>
  >;
  /** POST /api/users: Create a user from a full name and an e-mail address (shape A) */
  createDemoUser(request: RequestOf<'createDemoUser'>): Promise<
    | Reply<'createDemoUser', 201>
    | Reply<'createDemoUser', 400>
    | Reply<'createDemoUser', 408>
    | Reply<'createDemoUser', 409>
    | Reply<'createDemoUser', 413>
    | Reply<'createDemoUser', 415>
    | Reply<'createDemoUser', 417>
    | Reply<'createDemoUser', 421>
    | Reply<'createDemoUser', 422>
    | Reply<'createDemoUser', 429>
    | Reply<'createDemoUser', 431>
    | Reply<'createDemoUser', 500>
    | Reply<'createDemoUser', 503>
    | Reply<'createDemoUser', 504>
  >;
  /** DELETE /api/users/{id}: Delete a user (shape A) */
  deleteDemoUser(request: RequestOf<'deleteDemoUser'>): Promise<
    | Reply<'deleteDemoUser', 204>
    | Reply<'deleteDemoUser', 400>
    | Reply<'deleteDemoUser', 404>
    | Reply<'deleteDemoUser', 408>
    | Reply<'deleteDemoUser', 412>
    | Reply<'deleteDemoUser', 417>
    | Reply<'deleteDemoUser', 421>
    | Reply<'deleteDemoUser', 429>
    | Reply<'deleteDemoUser', 431>
    | Reply<'deleteDemoUser', 500>
    | Reply<'deleteDemoUser', 503>
    | Reply<'deleteDemoUser', 504>
  >;
  /** GET /api/users/{id}: Get one user, wrapped in data (shape A) */
  getDemoUser(request: RequestOf<'getDemoUser'>): Promise<
    | Reply<'getDemoUser', 200>
    | Reply<'getDemoUser', 304>
    | Reply<'getDemoUser', 400>
    | Reply<'getDemoUser', 404>
    | Reply<'getDemoUser', 408>
    | Reply<'getDemoUser', 417>
    | Reply<'getDemoUser', 421>
    | Reply<'getDemoUser', 431>
    | Reply<'getDemoUser', 500>
    | Reply<'getDemoUser', 503>
  >;
  /** GET /api/users: List users, one page at a time (shape A) */
  listDemoUsers(request: RequestOf<'listDemoUsers'>): Promise<
    | Reply<'listDemoUsers', 200>
    | Reply<'listDemoUsers', 400>
    | Reply<'listDemoUsers', 408>
    | Reply<'listDemoUsers', 417>
    | Reply<'listDemoUsers', 421>
    | Reply<'listDemoUsers', 431>
    | Reply<'listDemoUsers', 500>
    | Reply<'listDemoUsers', 503>
  >;
  /** PATCH /api/users/{id}: Change some of a user\'s fields (shape A) */
  patchDemoUser(request: RequestOf<'patchDemoUser'>): Promise<
    | Reply<'patchDemoUser', 200>
    | Reply<'patchDemoUser', 400>
    | Reply<'patchDemoUser', 404>
    | Reply<'patchDemoUser', 408>
    | Reply<'patchDemoUser', 412>
    | Reply<'patchDemoUser', 413>
    | Reply<'patchDemoUser', 415>
    | Reply<'patchDemoUser', 417>
    | Reply<'patchDemoUser', 421>
    | Reply<'patchDemoUser', 422>
    | Reply<'patchDemoUser', 429>
    | Reply<'patchDemoUser', 431>
    | Reply<'patchDemoUser', 500>
    | Reply<'patchDemoUser', 503>
    | Reply<'patchDemoUser', 504>
  >;
  /** PUT /api/users/{id}: Replace a user\'s name and e-mail address (shape A) */
  replaceDemoUser(request: RequestOf<'replaceDemoUser'>): Promise<
    | Reply<'replaceDemoUser', 200>
    | Reply<'replaceDemoUser', 400>
    | Reply<'replaceDemoUser', 404>
    | Reply<'replaceDemoUser', 408>
    | Reply<'replaceDemoUser', 412>
    | Reply<'replaceDemoUser', 413>
    | Reply<'replaceDemoUser', 415>
    | Reply<'replaceDemoUser', 417>
    | Reply<'replaceDemoUser', 421>
    | Reply<'replaceDemoUser', 422>
    | Reply<'replaceDemoUser', 429>
    | Reply<'replaceDemoUser', 431>
    | Reply<'replaceDemoUser', 500>
    | Reply<'replaceDemoUser', 503>
    | Reply<'replaceDemoUser', 504>
  >;
  /** POST /users: Create a user (shape B) */
  createUser(request: RequestOf<'createUser'>): Promise<
    | Reply<'createUser', 201>
    | Reply<'createUser', 400>
    | Reply<'createUser', 408>
    | Reply<'createUser', 409>
    | Reply<'createUser', 413>
    | Reply<'createUser', 415>
    | Reply<'createUser', 417>
    | Reply<'createUser', 421>
    | Reply<'createUser', 422>
    | Reply<'createUser', 429>
    | Reply<'createUser', 431>
    | Reply<'createUser', 500>
    | Reply<'createUser', 503>
    | Reply<'createUser', 504>
  >;
  /** DELETE /users/{id}: Delete a user (shape B) */
  deleteUser(request: RequestOf<'deleteUser'>): Promise<
    | Reply<'deleteUser', 204>
    | Reply<'deleteUser', 400>
    | Reply<'deleteUser', 404>
    | Reply<'deleteUser', 408>
    | Reply<'deleteUser', 412>
    | Reply<'deleteUser', 417>
    | Reply<'deleteUser', 421>
    | Reply<'deleteUser', 429>
    | Reply<'deleteUser', 431>
    | Reply<'deleteUser', 500>
    | Reply<'deleteUser', 503>
    | Reply<'deleteUser', 504>
  >;
  /** GET /users/{id}: Get one user (shape B) */
  getUser(request: RequestOf<'getUser'>): Promise<
    | Reply<'getUser', 200>
    | Reply<'getUser', 304>
    | Reply<'getUser', 400>
    | Reply<'getUser', 404>
    | Reply<'getUser', 408>
    | Reply<'getUser', 417>
    | Reply<'getUser', 421>
    | Reply<'getUser', 431>
    | Reply<'getUser', 500>
    | Reply<'getUser', 503>
  >;
  /** GET /users: List users, ordered by id unless sorted (shape B) */
  listUsers(request: RequestOf<'listUsers'>): Promise<
    | Reply<'listUsers', 200>
    | Reply<'listUsers', 400>
    | Reply<'listUsers', 408>
    | Reply<'listUsers', 417>
    | Reply<'listUsers', 421>
    | Reply<'listUsers', 431>
    | Reply<'listUsers', 500>
    | Reply<'listUsers', 503>
  >;
  /** PATCH /users/{id}: Change some of a user\'s fields (shape B) */
  patchUser(request: RequestOf<'patchUser'>): Promise<
    | Reply<'patchUser', 200>
    | Reply<'patchUser', 400>
    | Reply<'patchUser', 404>
    | Reply<'patchUser', 408>
    | Reply<'patchUser', 412>
    | Reply<'patchUser', 413>
    | Reply<'patchUser', 415>
    | Reply<'patchUser', 417>
    | Reply<'patchUser', 421>
    | Reply<'patchUser', 422>
    | Reply<'patchUser', 429>
    | Reply<'patchUser', 431>
    | Reply<'patchUser', 500>
    | Reply<'patchUser', 503>
    | Reply<'patchUser', 504>
  >;
  /** PUT /users/{id}: Replace a user\'s names and e-mail address (shape B) */
  replaceUser(request: RequestOf<'replaceUser'>): Promise<
    | Reply<'replaceUser', 200>
    | Reply<'replaceUser', 400>
    | Reply<'replaceUser', 404>
    | Reply<'replaceUser', 408>
    | Reply<'replaceUser', 412>
    | Reply<'replaceUser', 413>
    | Reply<'replaceUser', 415>
    | Reply<'replaceUser', 417>
    | Reply<'replaceUser', 421>
    | Reply<'replaceUser', 422>
    | Reply<'replaceUser', 429>
    | Reply<'replaceUser', 431>
    | Reply<'replaceUser', 500>
    | Reply<'replaceUser', 503>
    | Reply<'replaceUser', 504>
  >;
}
