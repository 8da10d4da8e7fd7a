import { pointerToken, toFieldErrors, type Contract, type FieldError, type Operation, type Parameter, type Schema, type Validator } from './contract.js';
import { HttpProblem } from '../errors/problem.js';
import { hasUnpairedSurrogate, wellFormed } from './unicode-text.js';

/** Path, query and body of a request, checked against the contract and converted to their declared types. */
export interface ValidRequest {
  readonly path: Record<string, unknown>;
  readonly query: Record<string, unknown>;
  readonly header: Record<string, unknown>;
  readonly body: unknown;
}

/** The raw parts of a request as the router hands them over. */
export interface RawRequest {
  readonly path: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string | string[] | undefined>>;
  /** Header names in lower case, as Node delivers them. */
  readonly header: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: unknown;
}

const LOCATIONS = ['path', 'query', 'header'] as const;
/** Where a parameter's raw value is found: headers are case-insensitive, and Node lower-cases them. */
const rawName = (location: (typeof LOCATIONS)[number], name: string) => (location === 'header' ? name.toLowerCase() : name);

/**
 * Parameters arrive as text. Only plain decimal notation becomes a number: "1e3", "0x10", "007" and " 7"
 * stay text and fail the type check, so every resource has exactly one spelling of its URL.
 */
function coerce(raw: unknown, schema: Schema): unknown {
  if (typeof raw !== 'string') return raw;
  if (schema.type === 'integer' && /^(0|-?[1-9]\d*)$/.test(raw)) return Number(raw);
  if (schema.type === 'number' && /^(0|-?[1-9]\d*)(\.\d+)?$/.test(raw)) return Number(raw);
  if (schema.type === 'boolean' && (raw === 'true' || raw === 'false')) return raw === 'true';
  return raw;
}

function objectSchema(parameters: readonly Parameter[]): Schema {
  return {
    type: 'object',
    properties: Object.fromEntries(parameters.map((p) => [p.name, p.schema])),
    required: parameters.filter((p) => p.required).map((p) => p.name),
  };
}

/** What an empty number parameter is told. */
const EMPTY_NUMBER = 'is empty: give a number, or leave the parameter out';

/** Most problems one answer lists (the contract's Problem.errors maxItems); the detail counts the others. */
export const MAX_LISTED_ERRORS = 20;

/** What a location without parameters yields: nothing to read, coerce or check. */
const NO_PARAMETERS: Readonly<Record<string, unknown>> = Object.freeze({});

/** The check of one location's parameters: reads the declared ones, coerces them, validates them. */
export function compileParameterCheck(contract: Contract, parameters: readonly Parameter[], location: (typeof LOCATIONS)[number]) {
  const declared = parameters.map((p) => ({ name: p.name, raw: rawName(location, p.name), schema: contract.resolve<Schema>(p.schema) }));
  const validate = contract.compile(objectSchema(parameters));
  // The error path of each number parameter, and its name. Query parameters only: a path segment is never
  // empty, and an empty header is as if absent.
  const numbers = new Map(
    location === 'query'
      ? declared.filter(({ schema }) => schema.type === 'integer' || schema.type === 'number').map(({ name }) => [`/${pointerToken(name)}`, name])
      : [],
  );
  return (raw: RawRequest[typeof location]): Record<string, unknown> => {
    const values: Record<string, unknown> = {};
    for (const { name, raw: rawKey, schema } of declared) {
      const value = raw[rawKey];
      if (value !== undefined) values[name] = coerce(value, schema);
    }
    if (!validate(values)) {
      // An empty number (`?page=`, which reqres.in and json-server read as absent) says so, not "must be integer".
      const isEmptyNumber = (path: string) => numbers.has(path) && values[numbers.get(path)!] === '';
      const errors = toFieldErrors(validate.errors).map((error) => (isEmptyNumber(error.path) ? { ...error, message: EMPTY_NUMBER } : error));
      throw new HttpProblem('invalid-parameter', `The ${location} parameters are invalid.`, { errors });
    }
    return values;
  };
}

/**
 * Refuses query parameters that other tools give a meaning this operation does not have (`?firstName=Mira`,
 * json-server's `_page` and `_limit`): ignored, as other unknown parameters are, they would return every user,
 * and the caller would believe it had filtered or paged. Other unknown parameters (a cache-buster such as `_=…`)
 * stay ignored.
 */
function foreignParameterCheck({ names, message }: NonNullable<Operation['foreignParameters']>) {
  const foreign = new Set(names);
  return (query: RawRequest['query']) => {
    const found = Object.keys(query).filter((name) => foreign.has(name));
    if (found.length === 0) return;
    throw new HttpProblem('invalid-parameter', 'The query parameters are invalid.', {
      errors: found.slice(0, MAX_LISTED_ERRORS).map((name) => ({ path: `/${name}`, message })),
    });
  };
}

/**
 * Every string of a JSON body (member names and values) must be Unicode text: JSON can escape half of a
 * surrogate pair alone (`"\ud800"`), which no UTF-8 text, database or other client can hold. The contract's
 * patterns do not say it (a surrogate range in a pattern means another thing to each regular-expression
 * engine, and generators refuse it): its descriptions do, and this enforces it, for every member at once.
 * Called on a body its schema accepted, so of bounded depth; walked without recursion all the same, and
 * linear in the body, which the body limit bounds. At most MAX_LISTED_ERRORS found.
 */
function unpairedSurrogates(body: unknown): FieldError[] {
  const found: FieldError[] = [];
  const pending: [unknown, string][] = [[body, '']];
  while (pending.length > 0 && found.length < MAX_LISTED_ERRORS) {
    const [value, path] = pending.pop()!;
    if (typeof value === 'string') {
      if (hasUnpairedSurrogate(value)) found.push({ path, message: 'must be Unicode text: it holds half of a surrogate pair alone' });
    } else if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--) pending.push([value[index], `${path}/${index}`]);
    } else if (value !== null && typeof value === 'object') {
      for (const [name, member] of Object.entries(value).reverse()) {
        // A name that is not Unicode text is reported once, its bad halves shown as U+FFFD.
        if (hasUnpairedSurrogate(name))
          found.push({ path: `${path}/${pointerToken(wellFormed(name))}`, message: 'is not Unicode text: it holds half of a surrogate pair alone' });
        else pending.push([member, `${path}/${pointerToken(name)}`]);
      }
    }
  }
  return found;
}

/**
 * What is wrong with a JSON body: its schema's errors or, for a body the schema accepts, each string that is
 * not Unicode text. A refused body is not walked: it is refused already, and may be nested 10,000 deep.
 */
export function bodyErrors(validate: Validator, body: unknown): FieldError[] {
  return validate(body) ? unpairedSurrogates(body) : toFieldErrors(validate.errors);
}

/**
 * Compiles, once, the check of one operation's header parameters alone; the returned function throws
 * HttpProblem 400. For a request whose path and query string were checked before, to the byte (a cached reply's
 * request target): its headers are all that can differ.
 */
export function compileHeaderCheck(contract: Contract, operationId: string): (header: RawRequest['header']) => void {
  const parameters = contract.operation(operationId).parameters.filter((p) => p.in === 'header');
  if (parameters.length === 0) return () => undefined;
  const check = compileParameterCheck(contract, parameters, 'header');
  return (header) => void check(header);
}

/**
 * Compiles, once, the checks of one operation; the returned function throws HttpProblem 400 or 422.
 * Locations the operation declares no parameters in are skipped, and yield an empty object. Parameters the
 * contract does not declare are not read: the production contract has no `delay`, so `delay=99` is ignored.
 */
export function compileRequestValidator(contract: Contract, operationId: string): (raw: RawRequest) => ValidRequest {
  const operation = contract.operation(operationId);
  const [checkPath, checkQuery, checkHeader] = LOCATIONS.map((location) => {
    const parameters = operation.parameters.filter((p) => p.in === location);
    return parameters.length === 0 ? undefined : compileParameterCheck(contract, parameters, location);
  });
  const validateBody: Validator | undefined = operation.bodySchema && contract.compile(operation.bodySchema);
  const refuseForeign = operation.foreignParameters && foreignParameterCheck(operation.foreignParameters);

  return (raw) => {
    refuseForeign?.(raw.query);
    const path = checkPath ? checkPath(raw.path) : NO_PARAMETERS;
    const query = checkQuery ? checkQuery(raw.query) : NO_PARAMETERS;
    const header = checkHeader ? checkHeader(raw.header) : NO_PARAMETERS;
    const errors = validateBody ? bodyErrors(validateBody, raw.body) : [];
    if (errors.length > 0) {
      if (errors.length <= MAX_LISTED_ERRORS) throw new HttpProblem('validation-failed', 'The request body does not match the schema.', { errors });
      // A body of thousands of unknown members would otherwise get a list of thousands, an answer larger than the body.
      const detail = `The request body does not match the schema; the first ${MAX_LISTED_ERRORS} of its ${errors.length} problems are listed.`;
      throw new HttpProblem('validation-failed', detail, { errors: errors.slice(0, MAX_LISTED_ERRORS) });
    }
    return { path, query, header, body: raw.body };
  };
}
