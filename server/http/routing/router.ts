import Router from '@koa/router';
import { Readable } from 'node:stream';
import type { Context, Middleware } from 'koa';
import bodyParser from 'koa-bodyparser';
import { routes, type RouteDefinition } from '../../../generated/routes.js';
import type { UserRecordsHandlers } from '../../../generated/server/handlers.js';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { authenticate, createAuthGuards, type AuthGuards } from '../auth/authentication.js';
import type { Contract } from '../contract/contract.js';
import { endOfTurn } from '../protocol/end-of-turn.js';
import { HandlerRequest } from './handler-request.js';
import { jsonArray } from './json-stream.js';
import { queryOf } from './query-string.js';
import { contentTypeOf, isAsyncIterable, mediaTypeOf, type AnyHandler, type AnyReply } from './replies.js';
import { allowOf, methodNotAllowed } from './request-checks.js';
import { compileOperation, type Answer, type Transport } from './operation-pipeline.js';
import { compileHeaderCheck, type RawRequest } from '../contract/request-validation.js';
import type { Limiters } from '../limits/limiter-store.js';
import { writeLimit } from '../limits/write-limit.js';
import type { PreferredAnswer } from '../sandbox/preferred-example.js';
import type { Metrics } from '../observability/metrics.js';
import { CACHED_OPERATIONS, type CachedReply, type Lookup, type ReplyCache } from '../reply-cache/reply-cache.js';
import { isTimeBound } from '../../domain/time-bound.js';

/** What the router needs: the contract, the handlers that implement it, the configuration, logs and metrics. */
export interface RouterDeps {
  readonly contract: Contract;
  readonly handlers: UserRecordsHandlers;
  readonly config: Config;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Where the per-client limits count. */
  readonly limiters: Limiters;
  /** Replies of reads cached until the store changes, where the store can tell at once that it did (reply-cache.ts). */
  readonly replyCache?: ReplyCache | undefined;
}

/** Methods that change the store: creates, replaces, updates and deletes. */
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** `/users/{id}` → `/users/:id` */
const toKoaPath = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1');

/** A reply as sent, before it is named after the operation that made it. */
type SentReply = Omit<CachedReply, 'operationId'>;

/**
 * Sends a handler's reply. `toCache` is given the reply as sent, serialized, when it is whole: a 200 whose body
 * is not a stream.
 */
async function writeReply(ctx: Context, reply: AnyReply, toCache?: (sent: SentReply) => void): Promise<void> {
  const array = isAsyncIterable(reply.body);
  const body = array ? await jsonArray(reply.body) : reply.body;
  ctx.status = reply.status;
  if (reply.headers) ctx.set(reply.headers);
  if (body === undefined) return;
  // Set as a header, not through ctx.type, which would add a charset to JSON; Koa then keeps it.
  const contentType = mediaTypeOf(reply.body);
  ctx.set('Content-Type', contentType);
  if (body instanceof Readable) {
    // Headers are gone by the time a stream fails: cut the connection so the client sees a broken body,
    // never a short one that parses. Koa reports the error to app.on('error').
    body.once('error', (error) => ctx.res.destroy(error));
  } else if (toCache && reply.status === 200) {
    // Serialized as Koa serializes an object body: the cached reply is the same bytes.
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    toCache({ status: reply.status, headers: { ...(reply.headers as Record<string, string> | undefined) }, contentType, body: text });
    ctx.body = text;
    return;
  }
  ctx.body = body;
}

/** Sends a cached reply, as writeReply sent it. */
function writeCached(ctx: Context, cached: SentReply): void {
  ctx.status = cached.status;
  ctx.set(cached.headers);
  ctx.set('Content-Type', cached.contentType);
  ctx.body = cached.body;
}

/** Names the operation (and its route) first, so that even a request refused before its handler is logged, measured and traced under it. */
const named =
  ({ operationId, path }: RouteDefinition): Middleware =>
  (ctx, next) => {
    ctx.state.operationId = operationId;
    ctx.state.route = path;
    return next();
  };

/** Sends the example a request asked for (Prefer), as the contract declares it. */
function writeExample(ctx: Context, answer: PreferredAnswer): void {
  ctx.status = answer.status;
  ctx.set(answer.headers);
  if (answer.body === undefined) return;
  // As a header, not through ctx.type, which would add a charset to JSON.
  ctx.set('Content-Type', contentTypeOf(answer.mediaType!));
  ctx.body = answer.body;
}

const done = async () => {};

/** What a Koa request holds for its operation's pipeline beyond Koa's own: the reply cache's lookup, when it found no reply. */
interface OperationState {
  cacheLookup?: Lookup | undefined;
}

/** How the operation pipeline reads a Koa request (operation-pipeline.ts), for one operation. */
function koaTransport(route: RouteDefinition, deps: RouterDeps, guards: AuthGuards, parts: OperationParts): Transport<Context> {
  const { json, writes, cache } = parts;
  return {
    header: (ctx, name) => ctx.get(name),
    hasBody: ({ req: { headers } }) => headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined,
    countWrite: writes && ((ctx) => writes(ctx, done) as Promise<void>),
    async readBody(ctx) {
      await json(ctx, done);
      // koa-bodyparser (non-strict) hands an empty body over as '', as it does the JSON string "": its text tells them apart.
      const { body, rawBody } = ctx.request as { body?: unknown; rawBody?: string };
      return { text: rawBody ?? '', value: body };
    },
    authenticate: authenticate(route, deps.config, guards),
    raw: (ctx, body) => ({ path: ctx.params, query: queryOf(ctx), header: ctx.headers, body }),
    // A reply cached for this request target was made from the same request and the store as it is now. Only
    // GETs are cached: their request target names their operation.
    cachedReply:
      cache &&
      ((ctx) => {
        if (cache.bypassedBy.some((name) => ctx.req.headers[name] !== undefined)) return undefined;
        const lookup = cache.replies.lookup(ctx.url);
        if (lookup?.reply) return lookup.reply;
        (ctx.state as OperationState).cacheLookup = lookup;
        return undefined;
      }),
    handlerInput: (ctx, valid, principal) => new HandlerRequest(valid, principal, ctx.state.client as string, ctx.res),
  };
}

/** What an operation's middleware is built with beyond the router's deps: the body parser, the write limit and the reply cache, where they apply. */
interface OperationParts {
  readonly json: Middleware;
  readonly writes: Middleware | undefined;
  readonly cache: CachedReplies | undefined;
  readonly answersPrefer: boolean;
}

function operationMiddleware(route: RouteDefinition, deps: RouterDeps, guards: AuthGuards, parts: OperationParts): Middleware {
  const { cache } = parts;
  const handler = deps.handlers[route.operationId] as AnyHandler;
  const run = compileOperation(
    { route, contract: deps.contract, handler, answersPrefer: parts.answersPrefer, compile: 'now' },
    koaTransport(route, deps, guards, parts),
  );
  return async (ctx) => {
    const answer: Answer = await run(ctx);
    if ('example' in answer) return writeExample(ctx, answer.example);
    if ('cached' in answer) return writeCached(ctx, answer.cached as CachedReply);
    const { reply } = answer;
    // A read's reply goes out with the turn's others (end-of-turn.ts), a write's at once: a write's commit
    // already gathers the turn's writes (docs/decisions/reply-cache.md has the measurements).
    if (route.method === 'GET') await endOfTurn();
    // Not a search that stopped short when its store time ran out: the same request may find more (time-bound.ts).
    const lookup = (ctx.state as OperationState).cacheLookup;
    const toCache =
      lookup && !isTimeBound(reply) ? (sent: SentReply) => cache!.replies.add(ctx.url, lookup.version, { ...sent, operationId: route.operationId }) : undefined;
    await writeReply(ctx, reply, toCache);
  };
}

interface CachedReplies {
  readonly replies: ReplyCache;
  readonly bypassedBy: readonly string[];
}

/**
 * The reply cache of an operation, if its replies may be cached (one of CACHED_OPERATIONS), and the headers whose
 * presence makes a request read the store instead. A credential would be missing from the key.
 */
function cachedReplies(deps: RouterDeps, route: RouteDefinition): CachedReplies | undefined {
  const bypassedBy = CACHED_OPERATIONS.get(route.operationId);
  if (!deps.replyCache || bypassedBy === undefined) return undefined;
  if (route.method !== 'GET' || route.security.length > 0) {
    throw new Error(`${route.operationId} has a reply that depends on more than its request target and the store: it cannot be cached`);
  }
  return { replies: deps.replyCache, bypassedBy };
}

/** Answers methods the contract does not declare on a known path: 405 with `Allow`, or 204 to OPTIONS. */
function otherMethods(methods: readonly string[]): Middleware {
  const allow = allowOf(methods);
  return (ctx) => {
    ctx.set('Allow', allow);
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      return;
    }
    throw methodNotAllowed(ctx.method, allow);
  };
}

/**
 * What a request for a cached reply is checked with before the reply is sent again: the operation that made it,
 * and that operation's check of its headers. Its path and query string are the request target the reply was
 * made for, checked in full then: the same bytes pass the same checks.
 */
interface CachedOperation {
  readonly route: RouteDefinition;
  readonly checkHeaders: (header: RawRequest['header']) => void;
}

/**
 * Answers a GET (or HEAD) whose reply is cached before the router matches it, and hands every other request to
 * the router. The reply was made for the same request target by the operation the router chose for it, and
 * would choose again (a route is a function of method and path); that operation's route middleware before
 * its handler is only a name for a GET. The request is named after it (logs, metrics, spans), its headers
 * are checked as that operation checks them (its path and query string, the same bytes, passed its checks
 * when the reply was made), and it is answered, without the cost of matching the route table and composing the
 * route's middleware (docs/decisions/reply-cache.md). It is sent at the end of the event loop's turn,
 * once the store is confirmed unchanged (reply-cache.ts); otherwise routed. A request with a header that
 * makes its operation read the store (`bypassedBy`) is routed at once.
 */
function cachedFirst(replies: ReplyCache, operations: ReadonlyMap<string, CachedOperation>, bypassedBy: readonly string[], routed: Middleware): Middleware {
  return (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || bypassedBy.some((name) => ctx.req.headers[name] !== undefined)) return routed(ctx, next);
    const reply = replies.peek(ctx.url);
    const operation = reply && operations.get(reply.operationId);
    if (!operation) return routed(ctx, next);
    ctx.state.operationId = reply.operationId;
    ctx.state.route = operation.route.path;
    operation.checkHeaders(ctx.headers);
    // Sent at the end of the turn, if the store is still what the reply was made from (reply-cache.ts).
    return replies.confirm(ctx.url, reply).then((current) => (current ? writeCached(ctx, reply) : routed(ctx, next)));
  };
}

/**
 * Binds every operation of the generated route table to Koa, under the configured base path: the router's
 * middleware, after the replies cached (cachedFirst) where there are any.
 */
export function createRouter(deps: RouterDeps): Middleware {
  const options = { prefix: deps.config.basePath || undefined, strict: true, sensitive: true };
  // A router per method: @koa/router tests a request against every route of its table in turn (26 routes and
  // paths), so a request is matched against its own method's routes (9 at most), and only one that none of
  // them takes against the paths alone (405, or 204 to OPTIONS). HEAD is answered by GET's routes.
  const byMethod = new Map<string, Router>();
  const routerOf = (method: string) => {
    let router = byMethod.get(method);
    if (!router) byMethod.set(method, (router = new Router(options)));
    return router;
  };
  // A JSON Merge Patch (RFC 7396) is JSON too; requireJson admits each operation's own media types only.
  const json = bodyParser({
    enableTypes: ['json'],
    extendTypes: { json: ['application/merge-patch+json'] },
    jsonLimit: String(deps.config.bodyLimitBytes),
    strict: false,
  });
  const methodsByPath = new Map<string, string[]>();
  const guards = createAuthGuards(deps.config, deps.limiters, deps.metrics, deps.logger);
  // One limit shared by every write operation of both shapes, checked before a byte of the body is read.
  const writes = writeLimit(deps.config.writesPerMinute, deps.limiters, deps.metrics, deps.logger);
  const sandbox = deps.config.sandbox !== undefined;
  const cachedOperations = new Map<string, CachedOperation>();
  // In sandbox mode, `Prefer: code=` is answered from the contract before the operation: never from a cached reply.
  const bypassedBy = new Set(sandbox ? ['prefer'] : []);
  for (const route of routes) {
    // The route table has the sandbox variant's operations: one this server's contract does not have (a
    // sandbox control, outside sandbox mode) is no route at all, 404 like any path the service does not have.
    if (!deps.contract.has(route.operationId)) continue;
    const sandboxOnly = deps.contract.operation(route.operationId).sandboxOnly;
    const path = toKoaPath(route.path);
    // A sandbox control (the reset) is no client's write: a test suite that reached the limit can still reset.
    const limit = WRITES.has(route.method) && !sandboxOnly ? writes : undefined;
    const cache = cachedReplies(deps, route);
    if (cache) {
      cachedOperations.set(route.operationId, { route, checkHeaders: compileHeaderCheck(deps.contract, route.operationId) });
      for (const name of cache.bypassedBy) bypassedBy.add(name);
    }
    // In sandbox mode, `Prefer: code=` answers the contract's example before anything else runs.
    const parts = { json, writes: limit, cache, answersPrefer: sandbox };
    routerOf(route.method).register(path, route.method === 'GET' ? ['HEAD', 'GET'] : [route.method], [
      named(route),
      operationMiddleware(route, deps, guards, parts),
    ]);
    methodsByPath.set(path, [...(methodsByPath.get(path) ?? []), route.method]);
  }
  const paths = new Router(options);
  for (const [path, methods] of methodsByPath) paths.all(path, otherMethods(methods));
  // A router's context adds what it sets (params, the router itself) to Koa's: the same object at run time.
  const routesOf = (router: Router) => router.routes() as unknown as Middleware;
  const anyMethod = routesOf(paths);
  const ownMethod = new Map([...byMethod].map(([method, router]) => [method, routesOf(router)]));
  if (ownMethod.has('GET')) ownMethod.set('HEAD', ownMethod.get('GET')!);
  const routed: Middleware = (ctx, next) => {
    const own = ownMethod.get(ctx.method);
    return own ? own(ctx, () => anyMethod(ctx, next)) : anyMethod(ctx, next);
  };
  return deps.replyCache ? cachedFirst(deps.replyCache, cachedOperations, [...bypassedBy], routed) : routed;
}
