// Writes parts of the contract as TypeScript modules, for code that cannot read files (the client package runs
// in browsers). `make generate` runs it; `make check-generated` checks what it wrote.
//   node scripts/contract-module.mjs <spec> contract   generated/contract.ts: the whole document, for the MSW handlers
//   node scripts/contract-module.mjs <spec> headers    generated/response-headers.ts: each answer's headers, for the client
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

const [spec, part = 'contract'] = process.argv.slice(2);
const document = parse(readFileSync(spec, 'utf8'));
const header = `// Generated from ${spec} by \`make generate\` (scripts/contract-module.mjs ${part}). Do not edit.\n`;

/** Follows a local `$ref` (and a chain of them) to what it names. */
function resolve(value) {
  if (typeof value?.$ref !== 'string') return value;
  const target = value.$ref.replace(/^#\//, '').split('/').reduce((node, key) => node?.[key], document);
  if (target === undefined) throw new Error(`dangling $ref ${value.$ref}`);
  return resolve(target);
}

function contractModule() {
  return `${header}// The contract as data: one JSON text, parsed once (cheaper to compile and to load than an object literal).

/** The OpenAPI document, as the YAML file holds it. */
export const contractDocument: Readonly<Record<string, unknown>> = JSON.parse(${JSON.stringify(JSON.stringify(document))});
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
  const numeric = [...kinds].filter(([, kind]) => kind === 'number').map(([name]) => name).sort();
  return `${header}// What the typed client reads from each answer: the headers its status declares, numbers as numbers.

/** operationId → status → the names of the headers that answer declares, as the contract spells them. */
export const responseHeaders: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = ${JSON.stringify(byOperation)};

/** The headers whose schema is a number: the client gives them as numbers. */
export const numericHeaders: ReadonlySet<string> = new Set(${JSON.stringify(numeric)});
`;
}

const parts = { contract: contractModule, headers: headersModule };
if (!(part in parts)) throw new Error(`unknown part ${part}: contract or headers`);
process.stdout.write(parts[part]());
