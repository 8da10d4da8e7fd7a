import { http, type HttpHandler } from 'msw';
import { createMemoryRepository } from '../../server/db/memory.repository.js';
import { createUserService } from '../../server/domain/user.service.js';
import { createHandlers } from '../../server/handlers/index.js';
import { loadContract } from '../../server/http/contract/contract.js';
import { createFetchDispatch } from '../../server/http/routing/fetch-dispatch.js';
import { DEFAULT_BODY_LIMIT_BYTES } from '../../server/http/routing/request-checks.js';
import { checkFirstUsers } from '../../server/startup/first-users.js';
import type { BasicCredentials } from './index.js';

// `@user-records/client/msw`: MSW handlers that answer as the service does, because they run the service's
// own handlers, domain, request checks and validation, over an in-memory store that starts as the 12 demo
// users. For Vitest or Jest (msw/node) and for the browser (msw/browser). Browser-safe: `make typecheck`
// checks this package as browser code.

/** Options of createMockHandlers. */
export interface MockHandlersOptions {
  /** Where the service would be, including any base path: `http://api.test`, or your page's origin plus a path. */
  readonly baseUrl: string;
  /** The one user the protected resource admits: by default `admin` / `dev-password`, as `make run` and `make sandbox`. */
  readonly credentials?: BasicCredentials;
  /**
   * The users the store starts with, and `reset()` restores, instead of the 12 demo users: shape B users as
   * `POST /users` takes them (ids from 1, in this order), checked against the contract like the server's
   * USERS_FILE. Users that do not pass throw, naming each wrong user and field.
   */
  readonly users?: readonly unknown[];
  /**
   * Every answer held back this many milliseconds, or a number drawn from `[min, max]` each time, as
   * `make sandbox SANDBOX_LATENCY_MS=200-800` does: to see loading states. A request's own `?delay=` wins.
   */
  readonly latency?: number | readonly [min: number, max: number];
}

/** The handlers, to give to `setupServer(...handlers)` or `setupWorker(...handlers)`, and their store's reset. */
export type MockHandlers = HttpHandler[] & {
  /** Puts the store back to its first users (the 12 demo users, or `users`), ids from 1, no idempotency keys: call it between tests. */
  reset(): void;
};

/** Operations for operators (health, readiness, metrics) are the server process's own; a mock has none to report. */
const OPERATORS_ONLY = 'operations';

/** The latency option as a range of whole milliseconds from 0 to 10 minutes; throws on anything else. */
function latencyRange(latency: MockHandlersOptions['latency']): { min: number; max: number } {
  const [min, max] = typeof latency === 'number' ? [latency, latency] : (latency ?? [0, 0]);
  const fits = (ms: unknown) => Number.isInteger(ms) && (ms as number) >= 0 && (ms as number) <= 600_000;
  if (!fits(min) || !fits(max) || min > max) throw new Error(`createMockHandlers: latency must be milliseconds from 0 to 600000, or [min, max] with min <= max (got ${JSON.stringify(latency)})`);
  return { min, max };
}

export function createMockHandlers({ baseUrl, credentials = { username: 'admin', password: 'dev-password' }, users, latency }: MockHandlersOptions): MockHandlers {
  const held = latencyRange(latency);
  const contract = loadContract();
  const first = users === undefined ? undefined : checkFirstUsers(users, contract);
  if (first !== undefined && 'problem' in first) throw new Error(`createMockHandlers: users ${first.problem}`);
  const repository = createMemoryRepository(new Date().toISOString(), first?.users);
  const restoreDemoData = async () => repository.restoreDemoData(new Date().toISOString());
  const handlers = createHandlers({
    users: createUserService(repository),
    basePath: new URL(baseUrl).pathname.replace(/\/$/, ''),
    renderMetrics: () => Promise.reject(new Error('the MSW handlers do not serve /metrics')),
    sandbox: { restoreDemoData },
  });
  const dispatch = createFetchDispatch({
    contract,
    handlers,
    baseUrl,
    credentials,
    bodyLimitBytes: DEFAULT_BODY_LIMIT_BYTES,
    serves: (route) => !contract.operation(route.operationId).tags.includes(OPERATORS_ONLY),
    latency: held,
  });
  // One handler for the service's requests: the dispatcher finds the operation as the server's router does.
  // The others stay unhandled, for MSW's onUnhandledRequest to decide (a page's own files load as ever).
  const all = [http.all(({ request }) => dispatch.handles(request), ({ request }) => dispatch.answer(request))];
  return Object.assign(all, { reset: () => void restoreDemoData() });
}
