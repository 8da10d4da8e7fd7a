import type { UserRecordsHandlers } from '../../generated/server/handlers.js';
import type { HandlerDeps } from './handler-deps.js';

/** The sandbox's controls (`make sandbox`); the router mounts them only in sandbox mode. */
export function createSandboxHandlers({ sandbox }: HandlerDeps): Pick<UserRecordsHandlers, 'resetSandbox'> {
  return {
    async resetSandbox() {
      if (!sandbox) throw new Error('resetSandbox runs only in sandbox mode; its route should not be mounted');
      await sandbox.restoreDemoData();
      return { status: 204 };
    },
  };
}
