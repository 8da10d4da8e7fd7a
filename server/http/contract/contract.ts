import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { contractDocument } from '../../../generated/contract.js';
import { ajvSchema } from './ajv-schema.js';
import { excerpt } from '../errors/excerpt.js';

// Browser-safe: the MSW handlers of the client package validate requests with it too (no file is read; the
// contract arrives as generated/contract.ts, which `make check-generated` keeps equal to the YAML file).

// ajv-formats is CommonJS; under NodeNext its default export arrives one level down.
const addFormats = addFormatsModule.default;

/** A JSON Schema object as OpenAPI 3.0 writes it. */
export type Schema = Record<string, unknown>;

/** A parameter of an operation, after `$ref`s are followed. */
export interface Parameter {
  readonly name: string;
  readonly in: 'path' | 'query' | 'header' | 'cookie';
  readonly required?: boolean;
  readonly schema: Schema;
  /** Read only by a server in sandbox mode (`delay`, `Prefer`); any other ignores it. */
  readonly 'x-sandbox-only'?: boolean;
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
  /** Mounted only by a server in sandbox mode (`x-sandbox-only`). */
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

/** The contract file, read once. */
export interface Contract {
  readonly document: Readonly<Record<string, unknown>>;
  operation(operationId: string): Operation;
  /** Compiles a schema of this contract (its `$ref`s resolved against the contract's components). */
  compile(schema: Schema): ValidateFunction;
  /** Resolves a `#/...` JSON Pointer inside the contract. */
  resolve<T>(value: unknown): T;
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

function createAjv(schemas: Record<string, unknown>): Ajv {
  // verbose: a failed pattern's error carries its schema, whose x-pattern-message says what it means.
  const ajv = new Ajv({ allErrors: true, strict: true, useDefaults: true, verbose: true });
  addFormats(ajv);
  // The contract's e-mail addresses carry a pattern that says exactly what is accepted (it is ajv-formats' own
  // rule, written out so that every tool applies it); `format: email` is left to tools as a description, so
  // that a bad address gets one error, in the pattern's words.
  ajv.addFormat('email', () => true);
  // OpenAPI 3.0 annotations that are not JSON Schema keywords, and the contract's own extension.
  ajv.addVocabulary(['example', 'xml', 'externalDocs', 'x-pattern-message']);
  ajv.addSchema({ $id: 'contract', definitions: ajvSchema(schemas) });
  return ajv;
}

/** A member name as one reference token of a JSON Pointer (RFC 6901 §3): `~` and `/` escaped. */
const pointerToken = (name: string) => name.replace(/~/g, '~0').replace(/\//g, '~1');

/** Turns ajv's errors into `{path, message}` pairs pointing at the offending member. */
export function toFieldErrors(errors: readonly ErrorObject[] | null | undefined, prefix = ''): FieldError[] {
  // An `if` error only says that its `then` failed, whose own errors are reported (see ajv-schema.ts).
  return (errors ?? []).filter((error) => error.keyword !== 'if').map((error) => {
    const params = error.params as { missingProperty?: string; additionalProperty?: string };
    if (error.keyword === 'required') {
      return { path: `${prefix}${error.instancePath}/${pointerToken(params.missingProperty!)}`, message: 'is required' };
    }
    if (error.keyword === 'additionalProperties') {
      // The member's name is the client's: repeated in part, so that a long one cannot make a long answer.
      return { path: `${prefix}${error.instancePath}/${pointerToken(excerpt(params.additionalProperty!))}`, message: 'is not allowed' };
    }
    if (error.keyword === 'pattern') {
      // Never the regular expression itself: the contract says in words what the pattern means.
      const message = (error.parentSchema as { 'x-pattern-message'?: string } | undefined)?.['x-pattern-message'];
      return { path: `${prefix}${error.instancePath}`, message: message ?? 'has characters that are not allowed' };
    }
    return { path: `${prefix}${error.instancePath}`, message: error.message ?? 'is invalid' };
  });
}

/** The service's contract, indexed once. */
export const loadContract = (): Contract => createContract(contractDocument);

/** Indexes an OpenAPI document; fails loudly on a dangling `$ref`. */
export function createContract(document: Readonly<Record<string, unknown>>): Contract {
  const components = (document.components ?? {}) as Record<string, Record<string, unknown>>;
  const ajv = createAjv(components.schemas ?? {});

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
      const responses = new Map(declared.map(([status, { content = {} }]) => [status, new Map(Object.entries(content).map(([type, media]) => [type, media.schema]))]));
      const responseHeaders = new Map(
        declared.map(([status, { headers = {} }]) => [status, new Map(Object.entries(headers).map(([name, header]) => [name, resolve<Schema>(resolve<{ schema: Schema }>(header).schema)]))]),
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
    compile: (schema) => ajv.compile(ajvSchema(schema) as Schema),
    operation(operationId) {
      const operation = operations.get(operationId);
      if (!operation) throw new Error(`The contract has no operation ${operationId}`);
      return operation;
    },
  };
}
