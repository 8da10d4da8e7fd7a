import { parse } from 'node:querystring';
import type { Context } from 'koa';
import type { RawRequest } from '../contract/request-validation.js';

/** Any character outside ASCII: a URL that carries one raw (not %-escaped) is read Koa's own way. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the range from NUL names every ASCII character.
const NON_ASCII = /[^\x00-\x7f]/;
const NO_QUERY: RawRequest['query'] = Object.freeze(Object.create(null) as RawRequest['query']);

/**
 * A request's query parameters exactly as Koa's `ctx.query` reads them (a name given again is an array, `+`
 * is a space, an escape that decodes to no UTF-8 is U+FFFD, a malformed one stays as written, one leading `?`
 * is dropped), through node:querystring: Koa builds a URLSearchParams and defines each name as a property,
 * a cost a short page feels in its throughput (docs/benchmarks.md, Figures behind the code). The two agree on every ASCII
 * query (tests/unit/query-string.test.ts); on raw non-ASCII bytes, which no conforming client sends, they
 * differ where a malformed escape is beside them, so those are left to Koa. No limit on how many names
 * (node:querystring drops those past 1,000 by default): the request line's own limit bounds them.
 */
export function queryOf(ctx: Context): RawRequest['query'] {
  const text = ctx.querystring;
  if (text === '') return NO_QUERY;
  if (NON_ASCII.test(text)) return ctx.query;
  return parse(text.charCodeAt(0) === 0x3f ? text.slice(1) : text, '&', '=', { maxKeys: 0 });
}
