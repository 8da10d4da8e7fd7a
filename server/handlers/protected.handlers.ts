import type { Principal, UserRecordsHandlers } from '../../generated/server/handlers.js';

type ProtectedHandlers = Pick<UserRecordsHandlers, 'getProtectedResource' | 'getDemoProtectedResource'>;

const greeting = (principal: Principal) => `Hello, ${principal.username}. You are authenticated.`;

/** The resource behind HTTP Basic; the HTTP layer has checked the credentials before a handler runs. */
export function createProtectedHandlers(): ProtectedHandlers {
  return {
    getProtectedResource: async ({ principal }) => ({ status: 200, body: greeting(principal) }),
    getDemoProtectedResource: async ({ principal }) => ({ status: 200, body: greeting(principal) }),
  };
}
