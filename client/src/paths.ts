import type { paths } from '../../generated/api.js';
import type { paths as sandboxPaths } from '../../generated/sandbox-api.js';

// The contract's paths as the client types them: openapi-typescript's, with what a JSON Schema pattern says
// and a TypeScript type can say too. Browser-safe.

/** The fields each list sorts by, as its `sort` pattern in the contract names them (a test keeps them equal). */
export const sortFields = {
  '/api/users': ['id', 'email', 'first_name', 'last_name'],
  '/users': ['id', 'email', 'firstName', 'lastName'],
} as const;

type SortKey<Field extends string> = Field | `-${Field}`;
/**
 * A list's `sort`: one to four fields, each ascending or, after `-`, descending (`last_name,-first_name`). The
 * contract takes more (up to 80 characters), but a fifth field never changes an order of four fields and `id`.
 */
export type SortOf<Field extends string> =
  | SortKey<Field>
  | `${SortKey<Field>},${SortKey<Field>}`
  | `${SortKey<Field>},${SortKey<Field>},${SortKey<Field>}`
  | `${SortKey<Field>},${SortKey<Field>},${SortKey<Field>},${SortKey<Field>}`;

/** Shape A's `sort`, e.g. `last_name,-first_name`. */
export type DemoSort = SortOf<(typeof sortFields)['/api/users'][number]>;
/** Shape B's `sort`, e.g. `lastName,-firstName`. */
export type LocalSort = SortOf<(typeof sortFields)['/users'][number]>;

type Get<Item> = Item extends { get: infer Operation } ? Operation : never;
type Parameters<Item> = Get<Item> extends { parameters: infer P } ? P : never;
/** A path item whose GET takes `Sort` for `sort`. */
type Sorted<Item, Sort> = Omit<Item, 'get'> & {
  get: Omit<Get<Item>, 'parameters'> & {
    parameters: Omit<Parameters<Item>, 'query'> & {
      query?: Omit<NonNullable<Parameters<Item> extends { query?: infer Q } ? Q : never>, 'sort'> & { sort?: Sort };
    };
  };
};

/** A variant's paths, with `sort` a union of what each list sorts by. */
type WithSort<Paths extends Record<'/api/users' | '/users', unknown>> = Omit<Paths, '/api/users' | '/users'> & {
  '/api/users': Sorted<Paths['/api/users'], DemoSort>;
  '/users': Sorted<Paths['/users'], LocalSort>;
};

/** The contract's paths, with `sort` a union of what each list sorts by. */
export type ClientPaths = WithSort<paths>;

/**
 * The sandbox variant's paths (openapi/sandbox.overlay.yaml): the contract's, each operation with the sandbox's
 * `delay` and `Prefer`, and `POST /__sandbox/reset`. What a client of the sandbox or the MSW handlers may send.
 */
export type SandboxClientPaths = WithSort<sandboxPaths>;
