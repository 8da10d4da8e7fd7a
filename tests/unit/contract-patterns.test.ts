import { loadContract } from '../../server/http/contract/ajv-contract.js';
import { type Schema } from '../../server/http/contract/contract.js';

// Every pattern and format a request is checked against must cost little whatever the client sends: it sits
// beside a maxLength (the server runs it only within that bound), it is linear on inputs far beyond the
// bound, it compiles in engines without JavaScript's `u` flag, and it says in words what it means.

const contract = loadContract();
const document = contract.document as { paths: Record<string, Record<string, unknown>>; components: Record<string, unknown> };

/** Every schema node reachable from the request side of the contract (parameters and request bodies). */
function requestSchemas(): Map<string, Schema> {
  const found = new Map<string, Schema>();
  const visit = (node: unknown, where: string): void => {
    const schema = contract.resolve<unknown>(node);
    if (Array.isArray(schema)) return schema.forEach((item, i) => visit(item, `${where}/${i}`));
    if (schema === null || typeof schema !== 'object') return;
    found.set(where, schema as Schema);
    for (const [key, inner] of Object.entries(schema)) if (key !== 'example' && key !== 'examples') visit(inner, `${where}/${key}`);
  };
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const op = operation as { parameters?: unknown[]; requestBody?: unknown };
      const parameters = method === 'parameters' ? (operation as unknown[]) : (op.parameters ?? []);
      parameters.forEach((p, i) => visit(contract.resolve<{ schema: unknown }>(p).schema, `${method} ${path} parameter ${i}`));
      if (op.requestBody) visit(contract.resolve<{ content: unknown }>(op.requestBody).content, `${method} ${path} body`);
    }
  }
  return found;
}

const schemas = [...requestSchemas()];
const withPattern = schemas.filter(([, schema]) => typeof schema.pattern === 'string');

test('the request side has patterns to check', () => {
  expect(withPattern.length).toBeGreaterThanOrEqual(5);
});

const costlyStrings = schemas.filter(([, s]) => s.pattern !== undefined || (s.type === 'string' && s.format !== undefined));

test.each(costlyStrings)('%s: a string pattern or format sits beside a maxLength', (_where, schema) => {
  expect(typeof schema.maxLength).toBe('number');
});

test.each(withPattern)('%s: the pattern compiles with and without the u flag, and has a message', (_where, schema) => {
  expect(() => new RegExp(schema.pattern as string)).not.toThrow();
  expect(() => new RegExp(schema.pattern as string, 'u')).not.toThrow();
  expect(schema['x-pattern-message']).toMatch(/^must /);
});

/** Long runs of what patterns accept, ended by something they refuse: what makes a backtracking engine work hardest. */
const HOSTILE = ['a', ' ', 'a ', '"a",', 'W/"a", ', '\u00a0a'].flatMap((unit) =>
  ['\u0001', '!', '"', '\u0085'].map((end) => unit.repeat(Math.ceil(65_536 / unit.length)) + end),
);

test.each(withPattern)('%s: the pattern stays linear on 64 KiB of hostile text', (_where, schema) => {
  const regex = new RegExp(schema.pattern as string, 'u');
  const started = performance.now();
  for (const text of HOSTILE) regex.test(text);
  // Linear: well under a millisecond per text. Quadratic (the name pattern before): over a second per text.
  expect(performance.now() - started).toBeLessThan(250);
});
