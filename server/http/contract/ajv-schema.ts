// How a schema of the contract is handed to ajv: the contract stays as written (Prism, the client and other
// tools read it too); only the compiled copy is rearranged.

const SCHEMA_PREFIX = '#/components/schemas/';

/** Keywords whose cost grows with the length of the string they test. */
const LENGTH_BOUND_KEYWORDS = ['pattern', 'format', 'x-pattern-message'] as const;

/**
 * With `allErrors`, ajv runs every keyword of a schema even after one failed, so a pattern or format would
 * still run over a string far longer than its `maxLength`, where a quadratic pattern costs CPU by the square
 * of the string's length. Here they move under `if: {maxLength}`: they run only on strings within the bound, so
 * their cost is bounded by the contract's own lengths whatever the pattern. A string that is too long gets
 * the length error alone; one within the bound gets every error as before.
 */
function lengthFirst(schema: Record<string, unknown>): Record<string, unknown> {
  if (typeof schema.maxLength !== 'number' || !LENGTH_BOUND_KEYWORDS.some((keyword) => keyword in schema)) return schema;
  if ('if' in schema) throw new Error('a schema with maxLength and a pattern or format cannot also use if/then');
  const outer: Record<string, unknown> = {};
  const inner: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    ((LENGTH_BOUND_KEYWORDS as readonly string[]).includes(key) ? inner : outer)[key] = value;
  }
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, which ajv reads; never awaited.
  return { ...outer, if: { maxLength: schema.maxLength }, then: inner };
}

/**
 * A schema of the contract as ajv compiles it: component `$ref`s point at the schemas added under
 * `contract`, and patterns and formats run only on strings within their `maxLength`.
 */
export function ajvSchema(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(ajvSchema);
  if (value === null || typeof value !== 'object') return value;
  const rewritten = Object.fromEntries(
    Object.entries(value).map(([key, inner]) =>
      key === '$ref' && typeof inner === 'string' && inner.startsWith(SCHEMA_PREFIX)
        ? [key, `contract#/definitions/${inner.slice(SCHEMA_PREFIX.length)}`]
        : [key, ajvSchema(inner)],
    ),
  );
  return lengthFirst(rewritten);
}
