import type { UserRecordsHandlers } from '../../generated/server/handlers.js';
import type { HandlerDeps } from './handler-deps.js';
import { createOperationsHandlers } from './operations.handlers.js';
import { createProtectedHandlers } from './protected.handlers.js';
import { createShapeAHandlers } from './shape-a.handlers.js';
import { createSandboxHandlers } from './sandbox.handlers.js';
import { createShapeBHandlers } from './shape-b.handlers.js';

export type { HandlerDeps } from './handler-deps.js';

/** Every operation of the contract; `satisfies` makes a missing or mistyped handler a compile error. */
export function createHandlers(deps: HandlerDeps): UserRecordsHandlers {
  const handlers = {
    ...createShapeAHandlers(deps),
    ...createShapeBHandlers(deps),
    ...createProtectedHandlers(),
    ...createOperationsHandlers(deps),
    ...createSandboxHandlers(deps),
  } satisfies UserRecordsHandlers;
  return handlers;
}
