import bourne from '@hapi/bourne';
import { routes, type RouteDefinition } from '../../../generated/routes.js';
import type { UserRecordsHandlers } from '../../../generated/server/handlers.js';
import { challenge, parseBasicAuthorization, type BasicCredentials } from '../auth/basic-credentials.js';
import type { Contract } from '../contract/contract.js';
import type { RawRequest } from '../contract/request-validation.js';
import { asUriReference, classify, problemDocument } from '../errors/problem.js';
import type { LatencyRange } from '../../config-defaults.js';
import { answerDelay, hold } from '../sandbox/answer-delay.js';
import { compileOperation, type Answer, type Transport } from './operation-pipeline.js';
import { contentTypeOf, isAsyncIterable, mediaTypeOf, type AnyHandler, type AnyReply } from './replies.js';
import { allowOf, methodNotAllowed, noRoute } from './request-checks.js';

// The service's operations over WHATWG Request and Response, without a server: what the MSW handlers of the
// client package run, in Node and in browsers. Each operation runs the same pipeline as the Koa router's
// (operation-pipeline.ts), read from a fetch Request; what a process adds around it (per-client limits,
// connection bounds, logs, metrics, security headers) is not here.

/** What the dispatcher serves, and how. */
export interface FetchDispatchOptions {
  readonly contract: Contract;
  readonly handlers: UserRecordsHandlers;
  /** The URL the service is mounted at, e.g. `http://api.test` or `http://localhost:5173/api-mock`. */
  readonly baseUrl: string;
  /** The one user the protected resource admits. */
  readonly credentials: BasicCredentials;
  /** Largest request body accepted (the server's BODY_LIMIT_BYTES). */
  readonly bodyLimitBytes: number;
  /** Which operations to serve; the others' paths are not this dispatcher's (it answers undefined). */
  readonly serves: (route: RouteDefinition) => boolean;
  /** How long every answer is held back, drawn from the range each time (SANDBOX_LATENCY_MS); none by default. A request's own `delay` wins. */
  readonly latency?: LatencyRange;
}

/** A request to one of the service's operations: the Request, its URL, and its path's parameters. */
interface Exchange {
  readonly request: Request;
  readonly url: URL;
  readonly params: Record<string, string>;
}

/** One route, compiled once: how to find it, and its operation's pipeline. */
interface CompiledRoute {
  readonly route: RouteDefinition;
  readonly pattern: RegExp;
  readonly run: (exchange: Exchange) => Promise<Answer>;
}

/** The parameters of a path template as a pattern: `/users/{id}` → `^/users/(?<id>[^/]+)$`. */
const patternOf = (path: string) => new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{(\w+)\\?\}/g, '(?<$1>[^/]+)')}$`);

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The query as Koa reads it: a name given once is a string, given again an array. */
function queryOf(url: URL): RawRequest['query'] {
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of url.searchParams) {
    const held = query[name];
    query[name] = held === undefined ? value : [...(Array.isArray(held) ? held : [held]), value];
  }
  return query;
}

/**
 * The body's text, refused past the limit as the server's body parser refuses it: reading stops at the
 * limit, so a body that is larger (or never ends, sent to the npx sandbox over HTTP) costs no more than that.
 */
async function bodyText(request: Request, limit: number): Promise<string> {
  if (request.body === null) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    size += read.value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw Object.assign(new Error('request entity too large'), { type: 'entity.too.large', limit });
    }
    chunks.push(read.value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

/** Parses JSON as the server's body parser does (co-body, non-strict, with @hapi/bourne refusing __proto__). */
function parsedJson(text: string): unknown {
  try {
    return bourne.parse(text, { protoAction: 'error' });
  } catch (error) {
    throw Object.assign(error as Error, { status: 400 });
  }
}

async function replyResponse(reply: AnyReply): Promise<Response> {
  const headers = new Headers(reply.headers);
  if (reply.body === undefined) return new Response(null, { status: reply.status, headers });
  let body = reply.body;
  if (isAsyncIterable(body)) {
    const items: unknown[] = [];
    for await (const item of body) items.push(item);
    body = items;
  }
  headers.set('Content-Type', mediaTypeOf(reply.body));
  return new Response(typeof body === 'string' ? body : JSON.stringify(body), { status: reply.status, headers });
}

function problemResponse(error: unknown, path: string): Response {
  const { status, headers, body } = problemDocument(classify(error), asUriReference(path));
  return new Response(body, { status, headers: { ...headers, 'Content-Type': 'application/problem+json' } });
}

/** The service over fetch: which requests are its own, and its answer to them. */
export interface FetchDispatch {
  /**
   * Whether a request is the service's: on its base URL, on a path one of the served operations has. Others
   * (another origin, a page's own files on the same origin) are left to whoever would get them otherwise.
   */
  handles(request: Request): boolean;
  /** The service's answer to one of its requests. */
  answer(request: Request): Promise<Response>;
  /** The answer to a request that is not the service's, where nothing else would answer it: a 404 problem naming where the API reference is. */
  notFound(request: Request, reference: string): Response;
}

export function createFetchDispatch(options: FetchDispatchOptions): FetchDispatch {
  const base = new URL(options.baseUrl);
  const basePath = base.pathname.replace(/\/$/, '');
  const delayOf = answerDelay(options.contract, options.latency ?? { min: 0, max: 0 });
  const transport: Transport<Exchange> = {
    header: ({ request }, name) => request.headers.get(name) ?? '',
    hasBody: ({ request }) => request.body !== null,
    async readBody({ request }) {
      const text = await bodyText(request, options.bodyLimitBytes);
      // The server's parser hands an empty body over as it is; white space alone is malformed JSON to it.
      return { text, value: text === '' ? text : parsedJson(text) };
    },
    async authenticate({ request }) {
      const given = parseBasicAuthorization(request.headers.get('authorization') ?? undefined);
      if (!given || given.username !== options.credentials.username || given.password !== options.credentials.password) throw challenge();
      return { username: given.username };
    },
    raw({ request, url, params }, body) {
      const header: Record<string, string> = {};
      request.headers.forEach((value, name) => {
        header[name] = value;
      });
      return { path: params, query: queryOf(url), header, body };
    },
    // The store is this page's or test process's own, so every request is one client's (its Idempotency-Keys too).
    handlerInput: ({ request }, valid, principal) => ({ ...valid, principal, client: 'msw', signal: request.signal }),
  };
  const open: Transport<Exchange> = { ...transport, authenticate: async () => undefined };
  const compiled: CompiledRoute[] = routes.filter(options.serves).map((route) => ({
    route,
    pattern: patternOf(route.path),
    // Compiled when the route is first asked for: a test that calls three operations compiles three.
    run: compileOperation(
      { route, contract: options.contract, handler: options.handlers[route.operationId] as AnyHandler, answersPrefer: true, compile: 'on first use' },
      route.security.length > 0 ? transport : open,
    ),
  }));

  async function run(found: CompiledRoute, request: Request, url: URL, params: Record<string, string>): Promise<Response> {
    const answer = await found.run({ request, url, params });
    if ('reply' in answer) return replyResponse(answer.reply);
    if (!('example' in answer)) throw new Error('the fetch dispatch caches no replies');
    const { example } = answer;
    return new Response(example.body ?? null, {
      status: example.status,
      headers: { ...example.headers, ...(example.mediaType ? { 'Content-Type': contentTypeOf(example.mediaType) } : {}) },
    });
  }

  /** The path below the base URL, if the request is on it. */
  const pathOf = (url: URL) => (url.origin === base.origin && url.pathname.startsWith(`${basePath}/`) ? url.pathname.slice(basePath.length) : undefined);
  const routesOn = (path: string | undefined) => (path === undefined ? [] : compiled.filter(({ pattern }) => pattern.test(path)));

  const handles = (request: Request) => routesOn(pathOf(new URL(request.url))).length > 0;
  async function answer(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const path = pathOf(url) ?? '';
    const onPath = routesOn(path);
    let response: Response;
    let ms = 0;
    try {
      ms = delayOf(queryOf(url));
      const method = request.method === 'HEAD' ? 'GET' : request.method;
      const found = onPath.find(({ route }) => route.method === method);
      if (found) {
        const params = Object.fromEntries(Object.entries(found.pattern.exec(path)!.groups ?? {}).map(([name, value]) => [name, decoded(value)]));
        response = await run(found, request, url, params);
      } else {
        const allow = allowOf(onPath.map(({ route }) => route.method));
        if (request.method === 'OPTIONS') response = new Response(null, { status: 204, headers: { Allow: allow } });
        else throw methodNotAllowed(request.method, allow);
      }
    } catch (error) {
      response = problemResponse(error, path);
    }
    // Problems are held back too, as the sandbox holds them.
    await hold(ms, request.signal);
    return request.method === 'HEAD' ? new Response(null, { status: response.status, headers: response.headers }) : response;
  }
  const notFound = (request: Request, reference: string) => {
    const { pathname } = new URL(request.url);
    return problemResponse(noRoute(request.method, pathname, reference), pathname);
  };
  return { handles, answer, notFound };
}
