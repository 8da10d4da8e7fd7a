import { type ContractNode, readContract, resolver } from '../support/contract-document.js';

// What tools that generate from the contract alone need of it. Test generators (Schemathesis, Hypothesis)
// make invalid values by breaking one keyword of a schema at a time: a request string whose `format` and
// `pattern` admit the same strings leaves no value that breaks one and keeps the other, and the search for
// one ran 638 s on a single list. A mock (Prism) answers the contract's examples as written: an example
// without a member its schema declares hides that member from every frontend on the mock.

const contract = readContract();

/** Every schema a request carries (parameters, bodies), with $refs followed, and where it is. */
function requestSchemas(contract: ContractNode): Array<[string, ContractNode]> {
  const resolve = resolver(contract);
  const found: Array<[string, ContractNode]> = [];
  const walk = (where: string, schema: ContractNode | undefined, seen: Set<ContractNode>) => {
    const node = schema && resolve(schema);
    if (!node || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    found.push([where, node]);
    for (const [name, member] of Object.entries<ContractNode>(node.properties ?? {})) walk(`${where}.${name}`, member, seen);
    for (const key of ['items', 'additionalProperties']) if (typeof node[key] === 'object') walk(`${where}[]`, node[key], seen);
    for (const key of ['allOf', 'oneOf', 'anyOf']) for (const part of node[key] ?? []) walk(where, part, seen);
  };
  for (const [path, item] of Object.entries<ContractNode>(contract.paths))
    for (const [method, operation] of Object.entries<ContractNode>(item)) {
      if (typeof operation !== 'object' || !operation.responses) continue;
      const at = `${method.toUpperCase()} ${path}`;
      for (const parameter of [...(item.parameters ?? []), ...(operation.parameters ?? [])].map(resolve))
        walk(`${at} ${parameter.in} ${parameter.name}`, parameter.schema, new Set());
      for (const [type, media] of Object.entries<ContractNode>(operation.requestBody ? (resolve(operation.requestBody).content ?? {}) : {}))
        walk(`${at} body (${type})`, media.schema, new Set());
    }
  return found;
}

/** The members an example of `schema` lacks, each by its path: what the mock would never show. */
function missingMembers(contract: ContractNode, schema: ContractNode, value: unknown, where = ''): string[] {
  const resolve = resolver(contract);
  const node = resolve(schema);
  if (Array.isArray(value) && node.items) return value.flatMap((item, index) => missingMembers(contract, node.items, item, `${where}/${index}`));
  if (value === null || typeof value !== 'object' || !node.properties) return [];
  return Object.entries<ContractNode>(node.properties).flatMap(([name, member]) =>
    name in (value as ContractNode) ? missingMembers(contract, member, (value as ContractNode)[name], `${where}/${name}`) : [`${where}/${name}`],
  );
}

/** Each JSON answer's example that lacks a declared member: `<operation> <status> <example>: <members>`. */
function incompleteExamples(contract: ContractNode): string[] {
  const resolve = resolver(contract);
  const found: string[] = [];
  for (const [path, item] of Object.entries<ContractNode>(contract.paths))
    for (const [method, operation] of Object.entries<ContractNode>(item)) {
      if (typeof operation !== 'object' || !operation.responses) continue;
      for (const [status, response] of Object.entries<ContractNode>(operation.responses)) {
        const media = resolve(response).content?.['application/json'];
        for (const [name, example] of Object.entries<ContractNode>(media?.examples ?? {})) {
          const missing = missingMembers(contract, media.schema, resolve(example).value);
          if (missing.length > 0) found.push(`${method.toUpperCase()} ${path} ${status} ${name}: ${missing.join(', ')}`);
        }
      }
    }
  return found;
}

test('no request string pairs format with pattern, so a generator breaks either at once', () => {
  const paired = requestSchemas(contract)
    .filter(([, schema]) => schema.type === 'string' && schema.format !== undefined && schema.pattern !== undefined)
    .map(([where, schema]) => `${where}: format ${schema.format} with a pattern`);
  expect(paired).toEqual([]);
});

test('every example of a JSON answer has every member its schema declares, so the mock shows each', () => {
  expect(incompleteExamples(contract)).toEqual([]);
});

test('a new optional member is caught until the examples carry it', () => {
  const changed = structuredClone(contract);
  changed.components.schemas.User.properties.nickname = { type: 'string', maxLength: 50 };
  expect(incompleteExamples(changed)).toContain('GET /users/{id} 200 tobias: /nickname');
  expect(incompleteExamples(changed).some((line) => line.startsWith('GET /users 200 '))).toBe(true);
});

test('the licence names its text by URL, and every operation says which credentials it takes (none: [])', () => {
  expect(contract.info.license).toEqual({ name: 'MIT', url: expect.stringMatching(/^https:\/\//) });
  const unsaid = Object.entries<ContractNode>(contract.paths).flatMap(([path, item]) =>
    Object.entries<ContractNode>(item)
      .filter(([, operation]) => typeof operation === 'object' && operation.responses && operation.security === undefined)
      .map(([method]) => `${method.toUpperCase()} ${path}`),
  );
  expect(unsaid).toEqual([]);
});
