import type { Context, Middleware } from 'koa';
import { RequestAbandonedError, SearchesBusyError, StoreUnavailableError, WriteOutcomeUnknownError } from '../../domain/errors.js';
import type { Logger } from '../../logger.js';
import { refusalSummary } from '../observability/refusal-summary.js';
import { endOfTurn } from '../protocol/end-of-turn.js';
import { asUriReference, classify, HttpProblem, problemDocument, PROBLEMS } from './problem.js';

// The one middleware that writes application/problem+json into Koa's responses.

/** Writes a problem as the response, and names its kind in `ctx.state.problem` for the metrics. */
export function sendProblem(ctx: Context, problem: HttpProblem): void {
  const { status, headers, body } = problemDocument(problem, asUriReference(ctx.path));
  ctx.state.problem = problem.kind;
  ctx.status = status;
  ctx.set(headers);
  ctx.type = 'application/problem+json';
  ctx.body = body;
}

/** Outermost middleware: every error becomes problem+json; failures nobody raised on purpose are logged, never shown. */
export function problemMiddleware(logger: Logger): Middleware {
  const searchesRefused = refusalSummary(logger, 'searches refused');
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const problem = classify(error);
      if (error instanceof WriteOutcomeUnknownError) {
        logger.warn({ code: error.code, method: ctx.method, path: ctx.path }, 'store did not confirm a write in time; its outcome is unknown to the client');
      } else if (error instanceof StoreUnavailableError) {
        // An outage, not a bug: one line with the store's code, no stack (an outage fails many requests at once).
        logger.warn({ code: error.code, method: ctx.method, path: ctx.path }, 'store unavailable');
      } else if (error instanceof RequestAbandonedError) {
        logger.info({ method: ctx.method, path: ctx.path }, 'client went away; the work for its answer was stopped');
      } else if (error instanceof SearchesBusyError) {
        // A refusal of load on purpose (SEARCH_QUEUE, SEARCH_QUEUE_PER_CLIENT): counted each (rate_limited_total,
        // by observability.ts), logged as a summary of its kind at most once a second.
        ctx.state.searchRefusal = error.reason;
        searchesRefused(error.reason);
      } else if (PROBLEMS[problem.kind].status >= 500 && !(error instanceof HttpProblem)) {
        // Only what nobody raised on purpose is a server failure. A 5xx refusal raised on purpose (a full
        // queue of password checks, a worker's missing metrics) is logged and counted where it is decided.
        logger.error({ err: error, method: ctx.method, path: ctx.path }, 'request failed');
      }
      sendProblem(ctx, problem);
      // A read's problem goes out with the turn's other replies, as its answer would (end-of-turn.ts).
      if (ctx.method === 'GET' || ctx.method === 'HEAD') await endOfTurn();
    }
  };
}
