// Writes parts of the contract as TypeScript modules, for code that cannot read files (the client package runs
// in browsers). `make generate` runs it; `make check-generated` checks what it wrote.
//   node scripts/contract-module.mjs <spec> contract   generated/contract.ts: the whole production document, for a server
//   node scripts/contract-module.mjs <spec> sandbox    generated/sandbox-contract.ts: the whole sandbox variant, for a
//                                                      server in sandbox mode
//   node scripts/contract-module.mjs <spec> runtime    generated/runtime-contract.ts: what validation and answers read, for
//                                                      the MSW handlers and the sandbox (no prose: a third of the size)
//   node scripts/contract-module.mjs <spec> headers    generated/response-headers.ts: each answer's headers, for the client
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

const [spec, part = 'contract'] = process.argv.slice(2);
const document = parse(readFileSync(spec, 'utf8'));
// The sandbox variant is read from wherever generate.sh wrote it (a scratch folder, for check-generated).
const source = spec.endsWith('user-records.sandbox.yaml') ? 'generated/user-records.sandbox.yaml' : spec;
const header = `// Generated from ${source} by \`make generate\` (scripts/contract-module.mjs ${part}). Do not edit.\n`;

/** Follows a local `$ref` (and a chain of them) to what it names. */
function resolve(value) {
  if (typeof value?.$ref !== 'string') return value;
  const target = value.$ref
    .replace(/^#\//, '')
    .split('/')
    .reduce((node, key) => node?.[key], document);
  if (target === undefined) throw new Error(`dangling $ref ${value.$ref}`);
  return resolve(target);
}

/** The whole document as data, exported as `name`: one JSON text, parsed once (cheaper to compile and to load than an object literal). */
const documentModule = (name, what) => () =>
  `${header}// The contract as data: one JSON text, parsed once (cheaper to compile and to load than an object literal).

/** ${what}, as the YAML file holds it. */
export const ${name}: Readonly<Record<string, unknown>> = JSON.parse(${JSON.stringify(JSON.stringify(document))});
`;

/**
 * Members only people and the tests read: prose, links to more prose, and what each example shows (the request
 * it was taken from, the condition it stands for, whether it is an excerpt). Answers never read them.
 */
const PROSE = new Set(['description', 'summary', 'externalDocs', 'x-request', 'x-condition', 'x-excerpt']);

/** The document without its prose, deeply; a schema's `properties` keep every name (a field may be called `summary`). */
function withoutProse(value, inProperties = false) {
  if (Array.isArray(value)) return value.map((item) => withoutProse(item));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => inProperties || !PROSE.has(key))
      .map(([key, inner]) => [key, withoutProse(inner, !inProperties && key === 'properties')]),
  );
}

/**
 * What else answers never read: an operation's `security: []` (it says what no `security` says, for tools that
 * ask every operation to say it) and a parameter's `example` (for tools that build requests from the contract).
 */
function withoutToolHints(value, key) {
  if (Array.isArray(value)) return value.map((item) => withoutToolHints(item));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([name, inner]) => !(name === 'security' && Array.isArray(inner) && inner.length === 0))
      .filter(([name]) => !(key === 'parameter' && name === 'example'))
      .map(([name, inner]) => [name, withoutToolHints(inner, key === 'parameters' ? 'parameter' : name)]),
  );
}

function runtimeModule() {
  const { openapi, info, servers, paths, components } = document;
  const runtime = withoutToolHints(withoutProse({ openapi, info: { title: info.title, version: info.version }, servers, paths, components }));
  return `${header}// The contract without its prose: every path, parameter, schema, response and example that validation and
// answers read, and none of the descriptions people read (the whole of it is generated/sandbox-contract.ts).

/** The sandbox variant of the contract, without descriptions, summaries and the requests of examples. */
export const runtimeContractDocument: Readonly<Record<string, unknown>> = JSON.parse(${JSON.stringify(JSON.stringify(runtime))});
`;
}

/** Every operation's declared response headers by status, and which headers are numbers. */
function headersModule() {
  const byOperation = {};
  const kinds = new Map();
  for (const pathItem of Object.values(document.paths)) {
    for (const operation of Object.values(pathItem)) {
      if (typeof operation?.operationId !== 'string') continue;
      const statuses = {};
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const names = Object.entries(resolve(response).headers ?? {}).map(([name, declared]) => {
          const type = resolve(resolve(declared).schema)?.type;
          const kind = type === 'integer' || type === 'number' ? 'number' : 'string';
          if (kinds.has(name) && kinds.get(name) !== kind) throw new Error(`header ${name} is a ${kinds.get(name)} in one answer and a ${kind} in another`);
          kinds.set(name, kind);
          return name;
        });
        if (names.length > 0) statuses[status] = names;
      }
      byOperation[operation.operationId] = statuses;
    }
  }
  const numeric = [...kinds]
    .filter(([, kind]) => kind === 'number')
    .map(([name]) => name)
    .sort();
  return `${header}// What the typed client reads from each answer: the headers its status declares, numbers as numbers.

/** operationId → status → the names of the headers that answer declares, as the contract spells them. */
export const responseHeaders: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = ${JSON.stringify(byOperation)};

/** The headers whose schema is a number: the client gives them as numbers. */
export const numericHeaders: ReadonlySet<string> = new Set(${JSON.stringify(numeric)});
`;
}

const parts = {
  contract: documentModule('contractDocument', 'The production contract, what a server not in sandbox mode serves'),
  sandbox: documentModule('sandboxContractDocument', "The sandbox variant, the production contract with the sandbox's controls"),
  runtime: runtimeModule,
  headers: headersModule,
};
if (!(part in parts)) throw new Error(`unknown part ${part}: ${Object.keys(parts).join(', ')}`);
process.stdout.write(parts[part]());
