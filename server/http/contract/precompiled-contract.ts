import { runtimeContractDocument } from '../../../generated/runtime-contract.js';
import { validators } from '../../../generated/validators.js';
import { createContract, type Contract, type Schema, type Validator } from './contract.js';
import { schemaKey } from './schema-key.js';

// The contract as the MSW handlers and the npx sandbox carry it: without its prose, and with its validators
// compiled ahead of time by ajv (scripts/validators-module.ts), so that neither ajv nor its compile step
// ships to a browser. Each validator is the code ajv would compile at run time from the same schema.

/** The contract without prose, with the validators compiled ahead. */
export function loadPrecompiledContract(): Contract {
  return createContract(runtimeContractDocument, (schema: Schema) => {
    // Each is ajv's standalone code for the schema: a function of the data with `errors`, as Validator says.
    const validate = validators[schemaKey(schema)] as Validator | undefined;
    // Only when the service compiles a schema the build did not (scripts/validators-module.ts lists them).
    if (validate === undefined)
      throw new Error(`No validator was compiled ahead for the schema ${JSON.stringify(schema).slice(0, 200)}; run \`make generate\`.`);
    return validate;
  });
}
