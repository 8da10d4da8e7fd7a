// The framework ceiling: Koa and @koa/router with one route returning the same precomputed body.
import Router from '@koa/router';
import Koa from 'koa';

const body = JSON.stringify({ id: 2, firstName: 'Tobias', lastName: 'Wren', email: 'tobias.wren@example.com' });
const app = new Koa();
const router = new Router();
router.get('/users/:id', (ctx) => {
  ctx.set('Content-Type', 'application/json'); // as the service sends it (no charset: RFC 8259)
  ctx.body = body;
});
app.use(router.routes());
const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => console.log(`listening ${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
