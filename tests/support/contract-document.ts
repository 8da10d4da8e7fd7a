import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

// The contract as written (openapi/user-records.yaml), as plain data, for tests that read it as an outside
// tool does: every $ref left in place, to be followed with `resolver`.

export type ContractNode = Record<string, any>;

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A fresh copy of the contract, parsed from its file. */
export const readContract = (): ContractNode => parse(readFileSync(`${ROOT}openapi/user-records.yaml`, 'utf8'));

/** Follows a node's local $ref (again, while it names another) in `contract`; any other node is itself. */
export const resolver =
  (contract: ContractNode) =>
  (node: ContractNode): ContractNode => {
    let at = node;
    while (typeof at?.$ref === 'string')
      at = at.$ref
        .slice(2)
        .split('/')
        .reduce((parent: ContractNode, key: string) => parent[key], contract);
    return at;
  };
