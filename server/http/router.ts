import Router from '@koa/router';
import { Readable } from 'node:stream';
import type { Context, Middleware } from 'koa';
import bodyParser from 'koa-bodyparser';
import { routes, type RouteDefinition } from '../../generated/routes.js';
import type { UserRecordsHandlers } from '../../generated/server/handlers.js';
import type { Config } from '../config.js';
import { createBasicAuthenticator } from './basic-auth.js';
import type { Contract } from './contract.js';
import { isAsyncIterable, jsonArrayStream } from './json-stream.js';
import { HttpProblem } from './problem.js';
import { compileRequestValidator } from './request-validation.js';

/** What the router needs: the contract, the handlers that implement it, and the configuration. */
export interface RouterDeps {
  readonly contract: Contract;
  readonly handlers: UserRecordsHandlers;
  readonly config: Config;
}

/** What every handler returns, seen from the HTTP layer. */
interface AnyReply {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}
type AnyHandler = (request: unknown) => Promise<AnyReply>;

const CHALLENGE = 'Basic realm="user-records", charset="UTF-8"';

/** `/users/{id}` → `/users/:id` */
const toKoaPath = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1');

async function writeReply(ctx: Context, reply: AnyReply): Promise<void> {
  const body = isAsyncIterable(reply.body) ? await jsonArrayStream(reply.body) : reply.body;
  ctx.status = reply.status;
  if (reply.headers) ctx.set(reply.headers);
  if (body === undefined) return;
  if (typeof body === 'string') ctx.type = 'text/plain; charset=utf-8';
  if (body instanceof Readable) {
    ctx.type = 'application/json; charset=utf-8';
    // Headers are gone by the time a stream fails: cut the connection so the client sees a broken body,
    // never a short one that parses. Koa reports the error to app.on('error').
    body.once('error', (error) => ctx.res.destroy(error));
  }
  ctx.body = body;
}

/** Rejects bodies that are not JSON before a byte of them is read. */
const requireJson: Middleware = async (ctx, next) => {
  if (!ctx.is('application/json')) {
    const given = ctx.get('content-type') || 'none';
    throw new HttpProblem('unsupported-media-type', `The request body must be application/json (got ${given}).`);
  }
  await next();
};

function authenticate(route: RouteDefinition, config: Config) {
  if (route.security.length === 0) return () => undefined;
  if (route.security.some((scheme) => scheme !== 'basic')) {
    throw new Error(`${route.operationId} uses a security scheme the server does not implement: ${route.security.join(', ')}`);
  }
  const verify = createBasicAuthenticator(config.basicAuth);
  return (ctx: Context) => {
    const principal = verify(ctx.get('authorization') || undefined);
    if (!principal) {
      throw new HttpProblem('unauthorized', 'Valid HTTP Basic credentials are required.', {
        headers: { 'WWW-Authenticate': CHALLENGE },
      });
    }
    return principal;
  };
}

function operationMiddleware(route: RouteDefinition, deps: RouterDeps): Middleware {
  const validate = compileRequestValidator(deps.contract, route.operationId);
  const principalOf = authenticate(route, deps.config);
  const handler = deps.handlers[route.operationId] as AnyHandler;
  return async (ctx) => {
    const principal = principalOf(ctx);
    const body = (ctx.request as { body?: unknown }).body;
    // koa-bodyparser (non-strict) hands an empty body over as '': there is no JSON value at all.
    if (route.hasBody && body === '') {
      throw new HttpProblem('malformed-json', 'The request body is empty; a JSON value is required.');
    }
    const request = validate({ path: ctx.params, query: ctx.query, header: ctx.headers, body });
    await writeReply(ctx, await handler({ ...request, principal }));
  };
}

/** Answers methods the contract does not declare on a known path: 405 with `Allow`, or 204 to OPTIONS. */
function otherMethods(methods: readonly string[]): Middleware {
  const allow = [...new Set([...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'])].sort().join(', ');
  return (ctx) => {
    ctx.set('Allow', allow);
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      return;
    }
    throw new HttpProblem('method-not-allowed', `${ctx.method} is not allowed here; use ${allow}.`, {
      headers: { Allow: allow },
    });
  };
}

/** Binds every operation of the generated route table to Koa, under the configured base path. */
export function createRouter(deps: RouterDeps): Router {
  const router = new Router({ prefix: deps.config.basePath || undefined, strict: true, sensitive: true });
  const json = bodyParser({ enableTypes: ['json'], jsonLimit: String(deps.config.bodyLimitBytes), strict: false });
  const methodsByPath = new Map<string, string[]>();
  for (const route of routes) {
    const path = toKoaPath(route.path);
    const chain = route.hasBody ? [requireJson, json] : [];
    router.register(path, route.method === 'GET' ? ['HEAD', 'GET'] : [route.method], [...chain, operationMiddleware(route, deps)]);
    methodsByPath.set(path, [...(methodsByPath.get(path) ?? []), route.method]);
  }
  for (const [path, methods] of methodsByPath) router.all(path, otherMethods(methods));
  return router;
}
