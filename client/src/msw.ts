import { http, type HttpHandler } from 'msw';
import type { components } from '../../generated/api.js';
import type { BasicCredentials } from './index.js';
import { createInMemoryService } from './service.js';

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
   * `POST /users` takes them (ids from 1, in this order), typed and checked against the contract like the
   * server's USERS_FILE. Users that do not pass throw, naming each wrong user and field: the compiler cannot see
   * users read from JSON.
   */
  readonly users?: readonly components['schemas']['UserInput'][];
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

export function createMockHandlers(options: MockHandlersOptions): MockHandlers {
  const { dispatch, reset } = createInMemoryService(options, 'createMockHandlers');
  // One handler for the service's requests: the dispatcher finds the operation as the server's router does.
  // The others stay unhandled, for MSW's onUnhandledRequest to decide (a page's own files load as ever).
  const all = [
    http.all(
      ({ request }) => dispatch.handles(request),
      ({ request }) => dispatch.answer(request),
    ),
  ];
  return Object.assign(all, { reset: () => void reset() });
}

export { type UnhandledRequestOptions, type UnhandledRequestStrategy, unhandledRequests } from './msw-options.js';
