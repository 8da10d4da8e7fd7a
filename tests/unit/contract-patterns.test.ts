import { loadContract } from '../../server/http/contract/ajv-contract.js';
import type { Schema } from '../../server/http/contract/contract.js';

// Every pattern and format a request is checked against must cost little whatever the client sends: it sits
// beside a maxLength (the server runs it only within that bound), it is linear on inputs far beyond the
// bound, it compiles in engines without JavaScript's `u` flag, and it says in words what it means.

// The sandbox variant: the production contract's requests, and the sandbox's parameters (delay, Prefer) too.
const contract = loadContract({ sandbox: true });
const document = contract.document as { paths: Record<string, Record<string, unknown>>; components: Record<string, unknown> };

/** Every schema node reachable from the request side of the contract (parameters and request bodies). */
function requestSchemas(): Map<string, Schema> {
  const found = new Map<string, Schema>();
  const visit = (node: unknown, where: string): void => {
    const schema = contract.resolve<unknown>(node);
    if (Array.isArray(schema)) {
      for (const [i, item] of schema.entries()) visit(item, `${where}/${i}`);
      return;
    }
    if (schema === null || typeof schema !== 'object') return;
    found.set(where, schema as Schema);
    for (const [key, inner] of Object.entries(schema)) if (key !== 'example' && key !== 'examples') visit(inner, `${where}/${key}`);
  };
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const op = operation as { parameters?: unknown[]; requestBody?: unknown };
      const parameters = method === 'parameters' ? (operation as unknown[]) : (op.parameters ?? []);
      for (const [i, p] of parameters.entries()) visit(contract.resolve<{ schema: unknown }>(p).schema, `${method} ${path} parameter ${i}`);
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

/** Text that tells engines apart: astral characters (two UTF-16 units) and BMP letters, blanks and marks. */
const PORTABILITY_SAMPLES = [
  'Ada 😀',
  '😀',
  'Zoë',
  'İstanbul',
  'a\u0301',
  '中文',
  'x'.repeat(3),
  'a b',
  '1',
  'a@example.com',
  'last_name,-id',
  'AgABAAI',
  'WzEsImlkIiwiYSIsWzJdXQ',
];

test.each(withPattern)('%s: the pattern is portable: no surrogate ranges, the same verdict with and without the u flag', (_where, schema) => {
  const pattern = schema.pattern as string;
  // A range of surrogates means lone halves to a `u` engine, every astral character to one without it, and
  // nothing a generator (Hypothesis) can draw from: the descriptions say it, and the server checks it.
  expect(pattern).not.toMatch(/\\u[dD][89a-fA-F][0-9a-fA-F]{2}/);
  for (const sample of PORTABILITY_SAMPLES) expect([sample, new RegExp(pattern).test(sample)]).toEqual([sample, new RegExp(pattern, 'u').test(sample)]);
});

const headerParameters = Object.values(document.paths)
  .flatMap((item) =>
    Object.entries(item).flatMap(([method, operation]) =>
      method === 'parameters' ? (operation as unknown[]) : ((operation as { parameters?: unknown[] }).parameters ?? []),
    ),
  )
  .map((parameter) => contract.resolve<{ name: string; in: string; schema: unknown }>(parameter))
  .filter((parameter) => parameter.in === 'header');
const headers = [...new Map(headerParameters.map((p) => [p.name, contract.resolve<Schema>(p.schema)])).entries()];

test('the contract has header parameters to check', () => {
  expect(headers.length).toBeGreaterThanOrEqual(5);
});

test.each(headers)('header %s admits only what HTTP carries as it is: visible ASCII and spaces, bounded', (_name, schema) => {
  expect(typeof schema.maxLength).toBe('number');
  expect(typeof schema.pattern).toBe('string');
  const regex = new RegExp(schema.pattern as string, 'u');
  // Whatever the pattern takes, a control character (HTAB aside, HTTP's white space), DEL or a byte above
  // ASCII turns it down.
  for (const code of [0x00, 0x0a, 0x0d, 0x16, 0x1f, 0x7f, 0x85, 0xe9, 0xff]) {
    for (const text of ['"1"', '*', 'code=404', 'a', '3f1c9a52-7d4e-4b8e-9a53-2b0f3c6d1e77']) {
      if (!regex.test(text)) continue;
      expect([text, code, regex.test(`${text}${String.fromCharCode(code)}`)]).toEqual([text, code, false]);
    }
  }
});

test('header parameters write their schema out: Dredd cannot compile a header whose schema is a $ref', () => {
  const parameters = (contract.document.components as { parameters: Record<string, { in: string; schema: { $ref?: string } }> }).parameters;
  const refs = Object.entries(parameters)
    .filter(([, p]) => p.in === 'header' && p.schema.$ref !== undefined)
    .map(([name]) => name);
  expect(refs).toEqual([]);
  // If-Match and If-None-Match take the same entity tags, written twice.
  expect(parameters.IfMatch!.schema).toEqual(parameters.IfNoneMatch!.schema);
});

test('entity-tag lists admit no white space before or after: HTTP strips it, so no server sees it (RFC 9110 §5.5)', () => {
  const pattern = new RegExp(
    (contract.document.components as { parameters: Record<string, { schema: { pattern: string } }> }).parameters.IfMatch!.schema.pattern,
    'u',
  );
  expect(['', '*', '"1"', 'W/"1"', '"1", "2"', '"1",\t"2"'].filter((value) => !pattern.test(value))).toEqual([]);
  expect([' "1"', '"1" ', '\t', ' ', ' *'].filter((value) => pattern.test(value))).toEqual([]);
});
