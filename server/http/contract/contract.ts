import { ajvSchema } from './ajv-schema.js';
import { excerpt } from '../errors/excerpt.js';
import { wellFormed } from './unicode-text.js';

// Browser-safe, and free of ajv: the MSW handlers of the client package validate requests with it too, with
// validators compiled ahead (precompiled-contract.ts); the server compiles them with ajv (ajv-contract.ts).
// No file is read: the contract arrives as a generated module, which `make check-generated` keeps equal to
// the YAML file.

/** A JSON Schema object as OpenAPI 3.0 writes it. */
export type Schema = Record<string, unknown>;

/** A parameter of an operation, after `$ref`s are followed. */
export interface Parameter {
  readonly name: string;
  readonly in: 'path' | 'query' | 'header' | 'cookie';
  readonly required?: boolean;
  readonly schema: Schema;
}

/** The parts of an OpenAPI operation the service reads. */
export interface Operation {
  readonly operationId: string;
  readonly parameters: readonly Parameter[];
  /** Schema of the JSON request body, when the operation takes one. */
  readonly bodySchema?: Schema;
  /** Declared responses: status code → media type → schema (undefined for an empty body). */
  readonly responses: ReadonlyMap<string, ReadonlyMap<string, Schema | undefined>>;
  /** Declared response headers: status code → header name (as the contract spells it) → schema. */
  readonly responseHeaders: ReadonlyMap<string, ReadonlyMap<string, Schema>>;
  /** A control of the sandbox (`x-sandbox-only`, the reset): no client's write, so no write limit counts it. */
  readonly sandboxOnly: boolean;
  readonly tags: readonly string[];
  /**
   * Query parameters other tools give this operation's meaning to (json-server's `_page`, a field name as a
   * filter), which it refuses rather than ignores, and what to use instead (`x-foreign-parameters`).
   */
  readonly foreignParameters?: { readonly names: readonly string[]; readonly message: string };
}

/** One failed check, as problem+json reports it. */
export interface FieldError {
  readonly path: string;
  readonly message: string;
}

/** One failed check of a validator, as ajv reports it (with `verbose`, so that a pattern's schema is at hand). */
export interface ValidationErrorObject {
  readonly keyword: string;
  readonly instancePath: string;
  readonly params: Record<string, unknown>;
  readonly message?: string;
  readonly parentSchema?: unknown;
}

/** A compiled schema: ajv's ValidateFunction, as the service uses it. */
export interface Validator {
  (data: unknown): boolean;
  errors?: readonly ValidationErrorObject[] | null;
}

/** Turns a schema as ajvSchema() rewrote it into its validator: ajv at run time, or a table compiled ahead. */
export type SchemaCompiler = (schema: Schema) => Validator;

/** The contract file, read once. */
export interface Contract {
  readonly document: Readonly<Record<string, unknown>>;
  operation(operationId: string): Operation;
  /** Whether the contract has the operation: the production contract has none of the sandbox's. */
  has(operationId: string): boolean;
  /** Compiles a schema of this contract (its `$ref`s resolved against the contract's components). */
  compile(schema: Schema): Validator;
  /** Resolves a `#/...` JSON Pointer inside the contract. */
  resolve<T>(value: unknown): T;
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/** A member name as one reference token of a JSON Pointer (RFC 6901 §3): `~` and `/` escaped. */
export const pointerToken = (name: string) => name.replace(/~/g, '~0').replace(/\//g, '~1');

/** Turns ajv's errors into `{path, message}` pairs pointing at the offending member. */
export function toFieldErrors(errors: readonly ValidationErrorObject[] | null | undefined, prefix = ''): FieldError[] {
  // An `if` error only says that its `then` failed, whose own errors are reported (see ajv-schema.ts).
  return (errors ?? [])
    .filter((error) => error.keyword !== 'if')
    .map((error) => {
      const params = error.params as { missingProperty?: string; additionalProperty?: string };
      if (error.keyword === 'required') {
        return { path: `${prefix}${error.instancePath}/${pointerToken(params.missingProperty!)}`, message: 'is required' };
      }
      if (error.keyword === 'additionalProperties') {
        // The member's name is the client's: repeated in part, so that a long one cannot make a long answer, and as
        // Unicode text (half of a surrogate pair alone shown as U+FFFD). A member another tool's users send
        // (reqres.in's `job`) is told what this service keeps instead (the object's `x-foreign-members`).
        const foreign = (error.parentSchema as { 'x-foreign-members'?: Record<string, string> } | undefined)?.['x-foreign-members'];
        const message = foreign !== undefined && Object.hasOwn(foreign, params.additionalProperty!) ? foreign[params.additionalProperty!]! : 'is not allowed';
        return { path: `${prefix}${error.instancePath}/${pointerToken(excerpt(wellFormed(params.additionalProperty!)))}`, message };
      }
      if (error.keyword === 'pattern') {
        // Never the regular expression itself: the contract says in words what the pattern means.
        const message = (error.parentSchema as { 'x-pattern-message'?: string } | undefined)?.['x-pattern-message'];
        return { path: `${prefix}${error.instancePath}`, message: message ?? 'has characters that are not allowed' };
      }
      return { path: `${prefix}${error.instancePath}`, message: error.message ?? 'is invalid' };
    });
}

/** Indexes an OpenAPI document, its schemas compiled by `compileSchema`; fails loudly on a dangling `$ref`. */
export function createContract(document: Readonly<Record<string, unknown>>, compileSchema: SchemaCompiler): Contract {
  function resolve<T>(value: unknown): T {
    const ref = (value as { $ref?: unknown } | null)?.$ref;
    if (typeof ref !== 'string') return value as T;
    const target = ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], document);
    if (target === undefined) throw new Error(`The contract has a dangling $ref: ${ref}`);
    return resolve(target as T);
  }

  const operations = new Map<string, Operation>();
  for (const pathItem of Object.values((document.paths ?? {}) as Record<string, Record<string, unknown>>)) {
    const shared = (pathItem.parameters ?? []) as unknown[];
    for (const method of HTTP_METHODS) {
      const op = pathItem[method] as Record<string, unknown> | undefined;
      if (!op) continue;
      const parameters = [...shared, ...((op.parameters ?? []) as unknown[])].map((p) => resolve<Parameter>(p));
      const body = op.requestBody ? resolve<Record<string, Record<string, { schema: Schema }>>>(op.requestBody) : undefined;
      const declared = Object.entries((op.responses ?? {}) as Record<string, unknown>).map(
        ([status, response]) => [status, resolve<{ content?: Record<string, { schema?: Schema }>; headers?: Record<string, unknown> }>(response)] as const,
      );
      const responses = new Map(
        declared.map(([status, { content = {} }]) => [status, new Map(Object.entries(content).map(([type, media]) => [type, media.schema]))]),
      );
      const responseHeaders = new Map(
        declared.map(([status, { headers = {} }]) => [
          status,
          new Map(Object.entries(headers).map(([name, header]) => [name, resolve<Schema>(resolve<{ schema: Schema }>(header).schema)])),
        ]),
      );
      const operationId = op.operationId as string;
      const sandboxOnly = op['x-sandbox-only'] === true;
      const tags = (op.tags ?? []) as string[];
      const foreign = op['x-foreign-parameters'] as Operation['foreignParameters'];
      operations.set(operationId, {
        operationId,
        parameters,
        bodySchema: body?.content?.['application/json']?.schema,
        responses,
        responseHeaders,
        sandboxOnly,
        tags,
        ...(foreign ? { foreignParameters: foreign } : {}),
      });
    }
  }

  return {
    document,
    resolve,
    compile: (schema) => compileSchema(ajvSchema(schema) as Schema),
    has: (operationId) => operations.has(operationId),
    operation(operationId) {
      const operation = operations.get(operationId);
      if (!operation) throw new Error(`The contract has no operation ${operationId}`);
      return operation;
    },
  };
}
