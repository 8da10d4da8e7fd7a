import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { contractDocument } from '../../../generated/contract.js';
import { sandboxContractDocument } from '../../../generated/sandbox-contract.js';
import { ajvSchema } from './ajv-schema.js';
import { createContract, type Contract, type Schema } from './contract.js';

// The contract with its schemas compiled by ajv when first used: the server's, and the tests'. The MSW
// handlers and the npx sandbox use the same validators compiled ahead instead (precompiled-contract.ts),
// made by scripts/validators-module.ts with createAjv below.

// ajv-formats is CommonJS; under NodeNext its default export arrives one level down.
const addFormats = addFormatsModule.default;

/** The ajv every validator of the contract is compiled with; `options` adds to it (the ahead-of-time build's `code`). */
export function createAjv(document: Readonly<Record<string, unknown>>, options: Options = {}): Ajv {
  const schemas = ((document.components ?? {}) as Record<string, Record<string, unknown>>).schemas ?? {};
  // verbose: a failed pattern's error carries its schema, whose x-pattern-message says what it means.
  const ajv = new Ajv({ allErrors: true, strict: true, useDefaults: true, verbose: true, ...options });
  addFormats(ajv);
  // The contract's e-mail addresses carry a pattern that says exactly what is accepted (it is ajv-formats' own
  // rule, written out so that every tool applies it); `format: email` is left to tools as a description, so
  // that a bad address gets one error, in the pattern's words.
  ajv.addFormat('email', () => true);
  // OpenAPI 3.0 annotations that are not JSON Schema keywords, and the contract's own extension.
  ajv.addVocabulary(['example', 'xml', 'externalDocs', 'x-pattern-message', 'x-foreign-members']);
  ajv.addSchema({ $id: 'contract', definitions: ajvSchema(schemas) });
  return ajv;
}

/** An OpenAPI document whose schemas ajv compiles on first use. */
export function createAjvContract(document: Readonly<Record<string, unknown>>): Contract {
  const ajv = createAjv(document);
  return createContract(document, (schema: Schema) => ajv.compile(schema));
}

/**
 * The service's contract, the whole document, indexed once: the production contract, or with `sandbox` its
 * sandbox variant (openapi/sandbox.overlay.yaml applied), which adds the sandbox's controls.
 */
export const loadContract = ({ sandbox = false } = {}): Contract => createAjvContract(sandbox ? sandboxContractDocument : contractDocument);
