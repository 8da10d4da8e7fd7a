// The framework ceiling: Koa and @koa/router with one route returning the same precomputed body. With
// REPLIES=per-turn, each reply waits for the end of its event-loop turn as the service's reads do
// (server/http/protocol/end-of-turn.ts): what that way of sending alone gives Koa.
import Router from '@koa/router';
import Koa from 'koa';
import { endOfTurn } from '../../dist/server/http/protocol/end-of-turn.js';

const body = JSON.stringify({ id: 2, firstName: 'Tobias', lastName: 'Wren', email: 'tobias.wren@example.com' });
const app = new Koa();
if (process.env.REPLIES === 'per-turn') {
  app.use(async (_ctx, next) => {
    await next();
    await endOfTurn();
  });
}
const router = new Router();
router.get('/users/:id', (ctx) => {
  ctx.set('Content-Type', 'application/json'); // as the service sends it (no charset: RFC 8259)
  ctx.body = body;
});
app.use(router.routes());
const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => console.log(`listening ${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
