// The ceiling of what every answer of this service must carry, in Koa and @koa/router with nothing else: one
// route returning the same precomputed body, with the headers the service sends (a request id, the OWASP
// security headers, Vary, ETag), an access-log line to stdout, and the duration in a Prometheus histogram
// by operation, method and status. No store, no validation, no limits: how far below the Koa ceiling these
// obligations alone put a GET, so that the service's own layers are measured against what they must do.
// Its replies wait for the end of their event-loop turn, as the service's reads do
// (server/http/protocol/end-of-turn.ts): a bound of the service sends as the service sends.
import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import Koa from 'koa';
import { destination } from 'pino';
import { Histogram, Registry } from 'prom-client';
// The service's own headers and demo users, from its build (make bench builds first): the ceiling carries
// exactly what it sends.
import { DEMO_USERS } from '../../dist/server/domain/demo-users.js';
import { toDemoUserPage } from '../../dist/server/handlers/shape-a.mapper.js';
import { toLocalUser } from '../../dist/server/handlers/shape-b.mapper.js';
import { endOfTurn } from '../../dist/server/http/protocol/end-of-turn.js';
import { API_SECURITY_HEADERS } from '../../dist/server/http/security/browser-headers.js';

const body = JSON.stringify({ id: 2, firstName: 'Tobias', lastName: 'Wren', email: 'tobias.wren@example.com' });
// The lists' replies as the service sends them for 12 users: what a larger reply costs the same obligations
// (the page of 6 of shape A with its links, and the full list of shape B), so that a list's ratio to a single
// GET has its ceiling too.
const users = DEMO_USERS.map((user, i) => ({ id: i + 1, ...user }));
const pageBody = JSON.stringify(toDemoUserPage({ page: 1, perPage: 6, total: users.length, totalPages: 2, users: users.slice(0, 6) }));
const pageHeaders = {
  'X-Total-Count': '12',
  'X-Total-Count-Relation': 'eq',
  Link: '</api/users?page=1&per_page=6>; rel="first", </api/users?page=2&per_page=6&cursor=AgABAAY>; rel="next", </api/users?page=2&per_page=6&cursor=AgIBAA>; rel="last"',
};
const listBody = JSON.stringify(users.map(toLocalUser));
const listHeaders = { 'X-Total-Count': '12', 'X-Total-Count-Relation': 'eq' };
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const log = destination({ dest: 1, sync: false });
const registry = new Registry();
const durations = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Duration of HTTP requests by operation and status.',
  labelNames: ['operation_id', 'method', 'status'],
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
});

const app = new Koa();
app.use(async (ctx, next) => {
  const started = performance.now();
  const given = ctx.get('x-request-id');
  const requestId = REQUEST_ID.test(given) ? given : randomUUID();
  ctx.set('X-Request-Id', requestId);
  ctx.set(API_SECURITY_HEADERS);
  ctx.vary('Origin');
  await next();
  await endOfTurn();
  const ms = performance.now() - started;
  durations.observe({ operation_id: 'getUser', method: ctx.method, status: ctx.status }, ms / 1000);
  log.write(
    `{"level":30,"time":${Date.now()},"service":"koa-obligations","pid":${process.pid},"requestId":"${requestId}","method":"${ctx.method}","path":${JSON.stringify(ctx.path)},"operationId":"getUser","status":${ctx.status},"durationMs":${Math.round(ms * 100) / 100},"msg":"request"}\n`,
  );
});
const router = new Router();
router.get('/users/:id', (ctx) => {
  ctx.set('ETag', '"1"');
  ctx.set('Content-Type', 'application/json');
  ctx.body = body;
});
router.get('/api/users', (ctx) => {
  ctx.set(pageHeaders);
  ctx.set('Content-Type', 'application/json');
  ctx.body = pageBody;
});
router.get('/users', (ctx) => {
  ctx.set(listHeaders);
  ctx.set('Content-Type', 'application/json');
  ctx.body = listBody;
});
app.use(router.routes());
const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => console.log(`listening ${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
