// The server's code that the frontend kit runs (client/: the MSW handlers in browsers, the npx sandbox in Node):
// the in-memory service and the fetch dispatch, and the defaults they take. Its one entry into the server
// (.dependency-cruiser.cjs), and browser-safe: nothing it reaches imports a Node module (client/tsconfig.json
// checks it as browser code).

export { DEFAULT_BODY_LIMIT_BYTES } from './config-defaults.js';
export { createMemoryRepository } from './db/memory-user-repository.js';
export { createUserService } from './domain/user.service.js';
export { createHandlers } from './handlers/index.js';
export { loadPrecompiledContract } from './http/contract/precompiled-contract.js';
export type { ProblemKind } from './http/errors/problem.js';
export { createFetchDispatch, type FetchDispatch } from './http/routing/fetch-dispatch.js';
export { checkFirstUsers } from './startup/first-users.js';
