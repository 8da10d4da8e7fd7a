import type { Middleware } from 'openapi-fetch';
import type { PathsWithMethod } from 'openapi-typescript-helpers';
import type { Method } from './client-types.js';
import type { SandboxClientPaths } from './paths.js';

// `Prefer` for chosen operations only. The sandbox (and the MSW handlers, and Prism) answers `Prefer: code=429`
// with the contract's example of that status, and refuses with 400 an operation that declares no 429: a
// Prefer in the client's `headers` reaches every operation, so it breaks every read of a test that wanted
// one write refused. Browser-safe.

/** An operation of the sandbox, as `METHOD /path`: `POST /users`, `GET /users/{id}`. */
export type SandboxOperation = { [M in Method]: `${Uppercase<M>} ${PathsWithMethod<SandboxClientPaths, M>}` }[Method];

type OperationOf<Key> = Key extends `${infer M} ${infer P extends keyof SandboxClientPaths}`
  ? SandboxClientPaths[P][Lowercase<M> & keyof SandboxClientPaths[P]]
  : never;
/** The statuses the operation declares. */
type StatusOf<Key> = OperationOf<Key> extends { responses: infer Responses } ? keyof Responses & number : never;

/**
 * What `Prefer` may ask of the operation, as the sandbox reads it: a status the operation declares (`code=429`),
 * with an example of it by name (`code=422, example=invalidEmail`), or an example of its success answer.
 */
export type PreferenceOf<Key extends SandboxOperation> = `code=${StatusOf<Key>}` | `code=${StatusOf<Key>}, example=${string}` | `example=${string}`;

/** A `Prefer` for each operation named, and none for the others. */
export type Preferences = { readonly [Key in SandboxOperation]?: PreferenceOf<Key> };

/**
 * Middleware that sends `Prefer` to the operations named, and to no others; a call that sends its own `Prefer`
 * keeps it. For a client of the sandbox, the MSW handlers or the Prism mock:
 *
 *     sandbox.use(preferFor({ 'POST /users': 'code=429', 'GET /users/{id}': 'code=404' }));
 */
export function preferFor(preferences: Preferences): Middleware {
  const wanted = new Map<string, string | undefined>(Object.entries(preferences));
  return {
    onRequest({ request, schemaPath }) {
      const prefer = wanted.get(`${request.method} ${schemaPath}`);
      if (prefer === undefined || request.headers.has('Prefer')) return undefined;
      request.headers.set('Prefer', prefer);
      return request;
    },
  };
}
