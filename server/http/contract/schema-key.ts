import type { Schema } from './contract.js';

/**
 * The name of a schema (as ajvSchema() rewrote it) among the validators compiled ahead: a 53-bit hash of its
 * JSON text (cyrb53), so that the table does not carry each schema's text a second time. The build that
 * makes the table fails if two schemas share a name.
 */
export function schemaKey(schema: Schema): string {
  const text = JSON.stringify(schema);
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}
