import type { UserRecordsHandlers } from '../../generated/server/handlers.js';
import type { HandlerDeps } from './handler-deps.js';

type OperationsHandlers = Pick<UserRecordsHandlers, 'getHealth' | 'getReadiness' | 'getMetrics'>;

/** Health, readiness and metrics, for operators and orchestrators. */
export function createOperationsHandlers({ users, renderMetrics }: HandlerDeps): OperationsHandlers {
  return {
    getHealth: async () => ({ status: 200, body: { status: 'ok' } }),
    async getReadiness() {
      await users.ready();
      return { status: 200, body: { status: 'ready' } };
    },
    getMetrics: async () => ({ status: 200, body: await renderMetrics() }),
  };
}
