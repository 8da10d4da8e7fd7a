import type { Problem } from './outcome.js';

// How the helpers read the client's answers, and the error they throw where they needed data. Browser-safe.

/** A problem the service answered where a helper needed data: its body, the response, and `retryAfter` if it said. */
export class UserRecordsProblem extends Error {
  override readonly name = 'UserRecordsProblem';
  constructor(
    readonly problem: Problem,
    readonly response: Response,
    /** Seconds the answer asked to wait before trying again (`Retry-After`), when it did. */
    readonly retryAfter?: number,
  ) {
    super(`${response.status} ${problem.title}${problem.detail ? `: ${problem.detail}` : ''}`);
  }
}

/** An answer of the client, as a helper reads it. */
export interface AnyOutcome {
  readonly status: number;
  readonly data?: unknown;
  readonly error?: unknown;
  readonly headers: Record<string, unknown>;
  readonly response: Response;
  readonly retryAfter?: number;
}

/** The UserRecordsProblem of an answer with a problem. */
export const problemOf = (outcome: AnyOutcome) => new UserRecordsProblem(outcome.error as Problem, outcome.response, outcome.retryAfter);
