import Koa from 'koa';
import type { UserRecordsHandlers } from '../../generated/server/handlers.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { Contract } from './contract.js';
import { HttpProblem, problemMiddleware } from './problem.js';
import { createRouter } from './router.js';

/** Everything the HTTP layer is built from. */
export interface AppDeps {
  readonly config: Config;
  readonly contract: Contract;
  readonly handlers: UserRecordsHandlers;
  readonly logger: Logger;
}

/** The Koa application: problem+json for every error, the contract's routes, 404 for the rest. */
export function createApp(deps: AppDeps): Koa {
  const app = new Koa();
  // Errors are answered and logged by problemMiddleware; Koa's default handler would print them again.
  app.silent = true;
  // What still reaches Koa: a response stream that failed after its headers were sent.
  app.on('error', (error: unknown) => deps.logger.error({ err: error }, 'response failed after it started'));
  const router = createRouter(deps);
  app.use(problemMiddleware(deps.logger));
  app.use(router.routes());
  app.use((ctx) => {
    throw new HttpProblem('not-found', `No route matches ${ctx.method} ${ctx.path}.`);
  });
  return app;
}
