import type { UserService } from '../domain/user.service.js';

/** What the operation handlers work with. */
export interface HandlerDeps {
  readonly users: UserService;
  /** Prefix of every path the service serves (BASE_PATH), for links such as `Location`. */
  readonly basePath: string;
  /** The metrics of this process in the Prometheus text format. */
  readonly renderMetrics: () => Promise<string>;
  /** The sandbox's controls; undefined outside sandbox mode, where their routes are not mounted. */
  readonly sandbox?: { restoreDemoData(): Promise<void> };
}
