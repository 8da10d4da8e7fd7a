import type { Client, MaybeOptionalInit } from 'openapi-fetch';
import type { PathsWithMethod, RequiredKeysOf } from 'openapi-typescript-helpers';
import type { Outcome } from './outcome.js';
import type { ClientPaths, SandboxClientPaths } from './paths.js';

// The typed client's own types: which paths, parameters and bodies each method takes, and what it answers.

export type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';

/** The paths of a variant of the contract: the production contract's, or the sandbox's. */
export type AnyPaths = ClientPaths | SandboxClientPaths;
/** What the compiler says of a path the contract does not have for the method called. */
type UnknownPath<M extends Method, P extends string> = `${P} is not a ${Uppercase<M>} path of the User Records Service`;
/** The path, if the contract has it for the method; otherwise the message above, which no string is. */
type KnownPath<Paths extends AnyPaths, M extends Method, P extends string> = P extends PathsWithMethod<Paths, M> ? P : UnknownPath<M, P>;
type PathItem<Paths extends AnyPaths, M extends Method, P extends string> = P extends PathsWithMethod<Paths, M> ? Paths[P] : never;
/** The operation of the method on a path the contract has (openapi-fetch's `Paths[Path][Method]`). */
type OperationOf<Paths extends AnyPaths, M extends Method, P extends string> = Extract<
  PathItem<Paths, M, P>[M & keyof PathItem<Paths, M, P>],
  // biome-ignore lint/suspicious/noExplicitAny: openapi-fetch's own constraint on an operation, which this mirrors.
  Record<string | number, any>
>;
/** What openapi-fetch takes as the `init` of the method on the path. */
type AllowedInit<Paths extends AnyPaths, M extends Method, P extends string> = NonNullable<
  MaybeOptionalInit<PathItem<Paths, M, P>, M & keyof PathItem<Paths, M, P>>
>;
/**
 * The type of a member the operation does not have, which the compiler names in its error
 * (`UnknownMember<"emial", "the body of POST /users">`). An object, not a message string: a string would meet
 * a `true` or a `1` given for the member in an intersection that TypeScript reduces to `never`, and every other
 * member would then be reported in its place.
 */
type UnknownMember<Name, Where extends string> = { [Message in `'${Name & (string | number)}' is not a member of ${Where}`]: never };
/**
 * `Given` with every member `Shape` does not have typed as the message that names it, deeply: an object literal
 * passed where openapi-fetch infers its type is not checked for excess members, so `emial` would pass silently.
 */
type Exact<Shape, Given, Where extends string> = Given extends readonly unknown[]
  ? Given
  : Given extends object
    ? {
        [K in keyof Given]: K extends keyof NonNullable<Shape>
          ? Exact<NonNullable<Shape>[K], Given[K], `${K & (string | number)} in ${Where}`>
          : UnknownMember<K, Where>;
      }
    : Given;
/**
 * No member the operation does not have: at the top (`param` for `params`), and deeply in `params` and `body`
 * (`serach`, `emial`). `Where` is the operation (`POST /users`), for the messages.
 */
type NoExcess<Init, Allowed, Where extends string> = {
  [K in keyof Init]: K extends keyof Allowed ? unknown : UnknownMember<K, `the init of ${Where}`>;
} & (Init extends { params: infer Given }
  ? { params: Exact<Allowed extends { params?: infer Shape } ? Shape : never, Given, `the params of ${Where}`> }
  : unknown) &
  (Init extends { body: infer Given } ? { body: Exact<Allowed extends { body?: infer Shape } ? Shape : never, Given, `the body of ${Where}`> } : unknown);
/**
 * openapi-fetch's rule for its `init` parameter: required when the operation has required parameters or a body.
 * Without openapi-fetch's `[key: string]: unknown`, which lets any member through where every member is optional.
 */
type InitParam<Init, Allowed, Where extends string> =
  RequiredKeysOf<Init> extends never ? [(Init & NoExcess<Init, Allowed, Where>)?] : [Init & NoExcess<Init, Allowed, Where>];

/**
 * A method of the client: the path checked first (a path the contract does not have is an error that names it,
 * `/nope is not a GET path of the User Records Service`), the parameters and body checked for unknown members,
 * and the answer an Outcome, told apart by its status.
 */
type CheckedMethod<Paths extends AnyPaths, M extends Method> = <
  P extends string,
  Init extends MaybeOptionalInit<PathItem<Paths, M, P>, M & keyof PathItem<Paths, M, P>>,
>(
  url: KnownPath<Paths, M, P>,
  ...init: InitParam<Init, AllowedInit<Paths, M, P>, `${Uppercase<M>} ${P}`>
) => Promise<Outcome<OperationOf<Paths, M, P>, Init>>;

/** The methods of a client of the variant with `Paths`: `GET`, `PUT`, `POST`, `DELETE`, `PATCH`. */
interface Operations<Paths extends AnyPaths> extends Pick<Client<Paths>, 'use' | 'eject'> {
  GET: CheckedMethod<Paths, 'get'>;
  PUT: CheckedMethod<Paths, 'put'>;
  POST: CheckedMethod<Paths, 'post'>;
  DELETE: CheckedMethod<Paths, 'delete'>;
  PATCH: CheckedMethod<Paths, 'patch'>;
}

/**
 * The typed client: `GET`, `POST`, `PUT`, `PATCH`, `DELETE` on the contract's paths, each returning an Outcome
 * (`{ status, data, error, headers, response }`, narrowed by `status`); `use` and `eject` for openapi-fetch middleware.
 * `UserRecordsClient<SandboxClientPaths>` is a client of the sandbox (createSandboxClient).
 */
export interface UserRecordsClient<Paths extends AnyPaths = ClientPaths> extends Operations<Paths> {}

/**
 * Either client, as a function that takes both sees it (the helpers, pages and changeUser): the operations both
 * have, with the parameters both take, which are production's (the sandbox's variant only adds to them). An
 * interface of its own, not a union of the two clients: a union's methods could not be called, their generic
 * signatures being different.
 */
export interface AnyUserRecordsClient extends Operations<ClientPaths> {}
