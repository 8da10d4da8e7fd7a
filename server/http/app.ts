import Koa from 'koa';
import type { UserRecordsHandlers } from '../../generated/server/handlers.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { Tracing } from '../tracing.js';
import { allowedHosts } from './security/allowed-hosts.js';
import { corsFor, securityHeaders } from './security/browser-headers.js';
import { createDocsRouter } from './docs/docs.js';
import { CONTRACT_FILE, SANDBOX_CONTRACT_FILE } from './contract/contract-file.js';
import type { Contract } from './contract/contract.js';
import type { Metrics } from './observability/metrics.js';
import { observability } from './observability/observability.js';
import { problemMiddleware } from './errors/problem-middleware.js';
import { clientKey } from './limits/client-address.js';
import type { LimitReport } from './limits/limit-report.js';
import { pipelining } from './limits/pipelining.js';
import { requestsPerConnection } from './limits/request-count.js';
import { requestHygiene } from './protocol/request-hygiene.js';
import { noRoute } from './routing/request-checks.js';
import { createRouter } from './routing/router.js';
import { delayedAnswers } from './sandbox/sandbox-middleware.js';
import type { Limiters } from './limits/limiter-store.js';
import type { ReplyCache } from './reply-cache/reply-cache.js';

/** Error codes of a response whose client went away before it was complete. */
const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE']);

/** Everything the HTTP layer is built from. */
export interface AppDeps {
  readonly config: Config;
  readonly contract: Contract;
  readonly handlers: UserRecordsHandlers;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Spans of requests (and their store queries), when tracing is on. */
  readonly tracing: Tracing;
  /** Where the per-client limits count (shared by every worker and instance where the deployment can). */
  readonly limiters: Limiters;
  /** Replies of reads cached until the store changes (reply-cache.ts), where the store can tell at once. */
  readonly replyCache?: ReplyCache | undefined;
  /** Where the connection limits report what they refused or closed. */
  readonly limitReport: LimitReport;
  /** Set once the server is shutting down: responses then ask clients to close their connection. */
  readonly lifecycle: { readonly closing: boolean };
}

/**
 * The Koa application, outermost first: one request per connection at a time; request id, logs and metrics;
 * requests per connection; security and CORS headers; problem+json for every error; in sandbox mode, the
 * answer's delay; request hygiene; the Host names it answers; the client's key for per-client limits; the
 * contract's routes; the API reference; 404 for the rest.
 */
export function createApp(deps: AppDeps): Koa {
  // ctx.ip agrees with ctx.state.client's choice of entry (the limits use the latter, normalised).
  const hops = deps.config.trustProxy;
  const app = new Koa({ proxy: hops > 0, maxIpsCount: hops });
  // Errors are answered and logged by problemMiddleware; Koa's default handler would print them again.
  app.silent = true;
  // What still reaches Koa: a response stream that failed after its headers were sent, reported once per
  // response (Koa hears of a broken connection from the socket and from the stream both). A client that
  // hung up mid-response (a closed tab, a proxy's timeout, a load generator stopping) is not a server failure.
  const reported = new WeakSet<Koa.Context>();
  app.on('error', (error: unknown, ctx?: Koa.Context) => {
    if (ctx) {
      if (reported.has(ctx)) return;
      reported.add(ctx);
    }
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && CLIENT_GONE.has(code)) {
      const requestId = ctx?.response.get('X-Request-Id');
      deps.logger.info({ requestId, path: ctx?.path, code }, 'client closed the connection before the response was complete');
    } else {
      deps.logger.error({ err: error }, 'response failed after it started');
    }
  });
  const router = createRouter(deps);
  app.use(pipelining(deps.config.maxPipelinedRequests, deps.limitReport));
  app.use(observability(deps.logger, deps.metrics, deps.tracing));
  app.use(requestsPerConnection(deps.config.maxRequestsPerSocket, deps.lifecycle));
  app.use(securityHeaders);
  app.use(corsFor(deps.config.corsOrigins, { localDevelopment: deps.config.sandbox !== undefined }));
  app.use(problemMiddleware(deps.logger));
  if (deps.config.sandbox) app.use(delayedAnswers(deps.contract, deps.config.sandbox.latencyMs));
  app.use(requestHygiene);
  app.use(allowedHosts(deps.config.allowedHosts));
  app.use(clientKey(hops));
  app.use(router);
  app.use(createDocsRouter(deps.contract, deps.config.sandbox ? SANDBOX_CONTRACT_FILE : CONTRACT_FILE, deps.config.basePath).routes());
  app.use((ctx) => {
    throw noRoute(ctx.method, ctx.path, `${deps.config.basePath}/docs`);
  });
  return app;
}
