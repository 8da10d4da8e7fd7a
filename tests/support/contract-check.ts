import { routes } from '../../generated/routes.js';
import { loadContract } from '../../server/http/contract/ajv-contract.js';
import { toFieldErrors, type Schema } from '../../server/http/contract/contract.js';

// The sandbox variant: every operation the route table has, and for the others the production contract's answers.
const contract = loadContract({ sandbox: true });
const problemValidator = contract.compile({ $ref: '#/components/schemas/Problem' });
const validators = new Map<Schema, ReturnType<typeof contract.compile>>();

const templates = routes.map((route) => ({
  route,
  pattern: new RegExp(`^${route.path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
}));

/** The operation of the contract that a method and path (without base path or query) address, if any. */
export function findOperationId(method: string, path: string): string | undefined {
  const verb = method === 'HEAD' ? 'GET' : method;
  return templates.find(({ route, pattern }) => route.method === verb && pattern.test(path))?.route.operationId;
}

/** A response as the test saw it. */
export interface SeenResponse {
  readonly status: number;
  readonly contentType: string;
  readonly body: unknown;
  /** Its headers, when the test has them as fetch does: each one the contract declares is checked too. */
  readonly headers?: { get(name: string): string | null };
}

/** What is wrong with the declared headers of an answer that carries them (a header may be absent). */
function headerErrors(operationId: string, status: string, headers: NonNullable<SeenResponse['headers']>): string | undefined {
  for (const [name, schema] of contract.operation(operationId).responseHeaders.get(status) ?? []) {
    const value = headers.get(name);
    if (value === null) continue;
    // A header is text; the contract's integer headers (X-Total-Count) are checked as the number they spell.
    const integer = (schema as { type?: string }).type === 'integer';
    if (integer && !/^\d+$/.test(value)) return `header ${name}: ${JSON.stringify(value)} is not an integer`;
    const errors = schemaErrors(schema, integer ? Number(value) : value);
    if (errors) return `header ${name}: ${JSON.stringify(value.length > 200 ? `${value.slice(0, 200)}…` : value)} ${errors}`;
  }
  return undefined;
}

function schemaErrors(schema: Schema, body: unknown): string | undefined {
  let validate = validators.get(schema);
  if (!validate) validators.set(schema, (validate = contract.compile(schema)));
  return validate(body) ? undefined : JSON.stringify(toFieldErrors(validate.errors));
}

/**
 * Checks a response against the contract: its status must be declared for the operation, its Content-Type
 * declared for that status as it is sent, its body valid against the schema, and each declared header it carries valid
 * against the header's schema. Responses outside any operation (unknown
 * route, wrong method) must be problem+json. Returns what is wrong, or undefined.
 */
export function contractViolation(operationId: string | undefined, response: SeenResponse): string | undefined {
  const mediaType = response.contentType.split(';')[0]?.trim() ?? '';
  if (!operationId) {
    if (mediaType !== 'application/problem+json') return `expected problem+json, got ${mediaType || 'no body'}`;
    return problemValidator(response.body) ? undefined : JSON.stringify(problemValidator.errors);
  }
  const declared = contract.operation(operationId).responses.get(String(response.status));
  if (!declared) return `${operationId} does not declare status ${response.status}`;
  const wrongHeader = response.headers && headerErrors(operationId, String(response.status), response.headers);
  if (wrongHeader) return wrongHeader;
  if (declared.size === 0) return response.body === undefined ? undefined : `${response.status} must have no body`;
  // Declared as sent: the whole Content-Type, a text answer's charset included (docs/contract-tools.md, Dredd).
  const contentType = response.contentType.trim();
  if (!declared.has(contentType)) return `${operationId} ${response.status} does not declare ${contentType || 'no body'}`;
  const schema = declared.get(contentType);
  return schema && schemaErrors(schema, response.body);
}
