// Writes the contract as a TypeScript module (generated/contract.ts), for code that cannot read files: the
// MSW handlers of the client package run in browsers. `make generate` runs it; `make check-generated` checks it.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

const [spec] = process.argv.slice(2);
const document = parse(readFileSync(spec, 'utf8'));
process.stdout.write(`// Generated from ${spec} by \`make generate\` (scripts/contract-module.mjs). Do not edit.
// The contract as data: one JSON text, parsed once (cheaper to compile and to load than an object literal).

/** The OpenAPI document, as the YAML file holds it. */
export const contractDocument: Readonly<Record<string, unknown>> = JSON.parse(${JSON.stringify(JSON.stringify(document))});
`);
