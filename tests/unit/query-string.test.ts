import type { IncomingMessage, ServerResponse } from 'node:http';
import fc from 'fast-check';
import Koa, { type Context } from 'koa';
import { queryOf } from '../../server/http/routing/query-string.js';

// The router reads query parameters with queryOf, not Koa's ctx.query (query-string.ts says why): it must
// read every query as Koa does, so that no parameter means one thing here and another to Koa's readers.

const app = new Koa();
/** Koa's context of a GET of this request target, as Koa makes it for a request. */
const contextOf = (target: string): Context =>
  app.createContext({ url: target, method: 'GET', headers: {}, socket: {} } as IncomingMessage, {} as ServerResponse);
/** Own names and values, in order: what a reader of the query sees. */
const entries = (query: object) => Object.entries(query);

/** Pieces of query strings, ASCII: separators, escapes (well-formed, truncated, malformed, of bad UTF-8), names. */
const PIECES = [
  'a',
  'b',
  'q',
  'page',
  '=',
  '&',
  ';',
  '+',
  ' ',
  '?',
  '#',
  '%',
  '%2',
  '%zz',
  '%20',
  '%2B',
  '%26',
  '%3D',
  '%3F',
  '%00',
  '%C3%A9',
  '%C3',
  '%A9',
  '%F0%9F%98%80',
  '%F0%9F',
  '%ff',
  '%%',
  '__proto__',
  'constructor',
  'toString',
  '\t',
  '\x7f',
  '\x00',
];

test('reads every ASCII query as Koa does', () => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 16 }), (pieces) => {
      const context = contextOf(`/users?${pieces.join('')}`);
      expect(entries(queryOf(context))).toEqual(entries(contextOf(`/users?${pieces.join('')}`).query));
    }),
    { numRuns: 20_000 },
  );
});

test('a name given again is an array, in order; + is a space; a leading ? is dropped', () => {
  const query = queryOf(contextOf('/users??q=a+b&sort=-id&q=c%2Bd&q'));
  expect(entries(query)).toEqual([
    ['q', ['a b', 'c+d', '']],
    ['sort', '-id'],
  ]);
});

test('keeps every name, past the 1,000 node:querystring keeps by default', () => {
  const names = Array.from({ length: 1500 }, (_, i) => `n${i}=${i}`);
  const query = queryOf(contextOf(`/users?${names.join('&')}&q=last`));
  expect(Object.keys(query)).toHaveLength(1501);
  expect(query.q).toBe('last');
});

test('a query with raw non-ASCII characters is read by Koa itself', () => {
  // Node hands raw bytes of the request line over as Latin-1 characters: é sent raw is "Ã©".
  for (const target of ['/users?q=Ã©', '/users?%C3%A9=Ã%+', '/users?%A9%C3%=©%2']) {
    expect(entries(queryOf(contextOf(target)))).toEqual(entries(contextOf(target).query));
  }
});

test('no query reads as no parameters', () => {
  expect(entries(queryOf(contextOf('/users')))).toEqual([]);
  expect(entries(queryOf(contextOf('/users?')))).toEqual([]);
});
