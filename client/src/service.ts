import {
  checkFirstUsers,
  createFetchDispatch,
  createHandlers,
  createMemoryRepository,
  createUserService,
  DEFAULT_BODY_LIMIT_BYTES,
  loadPrecompiledContract,
  type FetchDispatch,
} from '../../server/kit.js';
import type { BasicCredentials } from './index.js';

// The service over fetch Request/Response, on an in-memory store: its own handlers, domain, request checks
// and contract validation. The MSW handlers (msw.ts) and the npx sandbox (node/sandbox.ts) both answer with
// it. Browser-safe.

/** What the in-memory service is made with: where it is, who the protected resource admits, its first users, its latency. */
export interface InMemoryServiceOptions {
  readonly baseUrl: string;
  readonly credentials?: BasicCredentials;
  /** Shape B users as `POST /users` takes them, instead of the 12 demo users; checked against the contract. */
  readonly users?: readonly unknown[];
  /** Milliseconds every answer is held back, or a range drawn from each time. */
  readonly latency?: number | readonly [min: number, max: number];
}

/** Operations for operators (health, readiness, metrics) are the server process's own; an in-memory service has none to report. */
const OPERATORS_ONLY = 'operations';

/** The latency option as a range of whole milliseconds from 0 to 10 minutes; throws on anything else. */
function latencyRange(latency: InMemoryServiceOptions['latency'], who: string): { min: number; max: number } {
  const [min, max] = typeof latency === 'number' ? [latency, latency] : (latency ?? [0, 0]);
  const fits = (ms: unknown) => Number.isInteger(ms) && (ms as number) >= 0 && (ms as number) <= 600_000;
  if (!fits(min) || !fits(max) || min > max)
    throw new Error(`${who}: latency must be milliseconds from 0 to 600000, or [min, max] with min <= max (got ${JSON.stringify(latency)})`);
  return { min, max };
}

/** The service in memory, and the way to put its store back to its first users. `who` names the caller in errors. */
export function createInMemoryService(
  { baseUrl, credentials = { username: 'admin', password: 'dev-password' }, users, latency }: InMemoryServiceOptions,
  who: string,
): { readonly dispatch: FetchDispatch; reset(): Promise<void> } {
  const held = latencyRange(latency, who);
  const contract = loadPrecompiledContract();
  const first = users === undefined ? undefined : checkFirstUsers(users, contract);
  if (first !== undefined && 'problem' in first) throw new Error(`${who}: users ${first.problem}`);
  const repository = createMemoryRepository(new Date().toISOString(), first?.users);
  const reset = async () => repository.restoreDemoData(new Date().toISOString());
  const handlers = createHandlers({
    users: createUserService(repository),
    basePath: new URL(baseUrl).pathname.replace(/\/$/, ''),
    renderMetrics: () => Promise.reject(new Error('an in-memory service does not serve /metrics')),
    sandbox: { restoreDemoData: reset },
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
  return { dispatch, reset };
}
