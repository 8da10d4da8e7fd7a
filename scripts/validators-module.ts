// Writes generated/validators.ts: every validator the MSW handlers and the npx sandbox use, compiled ahead of
// time by ajv (standalone code), so that they carry neither ajv nor its compile step. `make generate` runs it
// (bundled by esbuild, since it imports the service's TypeScript); `make check-generated` checks what it wrote.
// The schemas are the ones the in-memory service compiles: found by running its own compile calls over a
// contract that records them.
import { _ } from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';
import ucs2length from 'ajv/dist/runtime/ucs2length.js';
import { routes } from '../generated/routes.js';
import { runtimeContractDocument } from '../generated/runtime-contract.js';
import { createAjv, createAjvContract } from '../server/http/contract/ajv-contract.js';
import { ajvSchema } from '../server/http/contract/ajv-schema.js';
import type { Contract, Schema } from '../server/http/contract/contract.js';
import { compileRequestValidator } from '../server/http/contract/request-validation.js';
import { schemaKey } from '../server/http/contract/schema-key.js';
import { answerDelay } from '../server/http/sandbox/answer-delay.js';
import { checkFirstUsers } from '../server/startup/first-users.js';

/**
 * The formats the compiled code calls, as code: ajv-formats' `int32` and the service's `email` (a description,
 * never a check: see ajv-contract.ts). A schema with another format fails this build (ajv's strict mode), so
 * that no format is ever skipped silently.
 */
const FORMATS = `{
  int32: { type: "number", validate: (value) => Number.isInteger(value) && value <= 2147483647 && value >= -2147483648 },
  email: () => true,
}`;

// Every schema the in-memory service compiles: each operation's request checks (as the sandbox runs them),
// the delay parameter, and the users it may start with.
const compiled = new Map<string, Schema>();
const ajvContract = createAjvContract(runtimeContractDocument);
const recording: Contract = {
  ...ajvContract,
  compile(schema) {
    compiled.set(JSON.stringify(schema), schema);
    return ajvContract.compile(schema);
  },
};
for (const route of routes) compileRequestValidator(recording, route.operationId);
answerDelay(recording, { min: 0, max: 0 });
checkFirstUsers([], recording);

// The same ajv, told to keep the code of what it compiles.
const ajv = createAjv(runtimeContractDocument, { code: { source: true, esm: true, optimize: true, formats: _`formats` } });
const exports: Record<string, string> = {};
for (const schema of compiled.values()) {
  const rewritten = ajvSchema(schema) as Schema;
  const key = schemaKey(rewritten);
  if (exports[`v_${key}`] !== undefined) throw new Error(`two schemas share the key ${key}: change schemaKey`);
  ajv.addSchema({ ...rewritten, $id: `schema_${key}` });
  exports[`v_${key}`] = `schema_${key}`;
}
let code = standaloneCode.default(ajv, exports);
// ajv's one run-time helper the code needs (string length in code points), carried in the module.
code = code.replaceAll('require("ajv/dist/runtime/ucs2length").default', 'ucs2length');
// Each error names the schema keyword it failed (`schemaPath`), which the service never reads (contract.ts,
// ValidationErrorObject): left out, the kit's bundle is smaller by about 8 kB before gzip.
code = code.replace(/schemaPath:"(?:[^"\\]|\\.)*",/g, '');
const leftover = /require\("[^"]*"\)/.exec(code);
if (leftover) throw new Error(`the compiled validators need ${leftover[0]}: carry it in the module as ucs2length is`);
// The table, keyed by schemaKey, instead of one export per schema.
const table: string[] = [];
code = code.replace(/export const v_([a-z0-9]+) = ([A-Za-z0-9_$]+);/g, (_line, key: string, validate: string) => {
  table.push(`  ${JSON.stringify(key)}: ${validate},`);
  return '';
});
if (table.length !== compiled.size) throw new Error(`expected ${compiled.size} validators, found ${table.length}`);

process.stdout.write(`// @ts-nocheck: ajv's standalone code, which is not written for a type checker.
// Generated from openapi/user-records.yaml by \`make generate\` (scripts/validators-module.ts). Do not edit.
// The validators of the in-memory service (MSW handlers, npx sandbox), compiled ahead of time by ajv. Typed by
// server/http/contract/precompiled-contract.ts, which loads them: generated code imports nothing of the server.

const ucs2length = ${ucs2length.default.toString()};
const formats = ${FORMATS};
${code.replace(/^"use strict";/, '').trim()}

/** schemaKey(schema) → its validator. */
export const validators: Readonly<Record<string, unknown>> = {
${table.join('\n')}
};
`);
