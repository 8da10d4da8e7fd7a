import type { ServerResponse } from 'node:http';
import type { Principal } from '../../../generated/server/handlers.js';
import type { ValidRequest } from '../contract/request-validation.js';
import { abandonment } from './abandonment.js';

/**
 * What a handler receives: the validated request, who sent it, and a signal made on first use (most handlers
 * never ask for it). A class, so that `signal` is a getter of its prototype: a getter in an object literal is
 * a new closure each request, which V8 keeps in a hidden class of that object alone, made in the old
 * generation: every routed request would leave garbage there, and full collections would follow (figures:
 * docs/benchmarks.md, Figures behind the code).
 */
export class HandlerRequest {
  readonly path: Record<string, unknown>;
  readonly query: Record<string, unknown>;
  readonly header: Record<string, unknown>;
  readonly body: unknown;
  readonly #res: ServerResponse;
  #signal: AbortSignal | undefined;

  constructor(
    request: ValidRequest,
    readonly principal: Principal | undefined,
    readonly client: string,
    res: ServerResponse,
  ) {
    this.#res = res;
    this.path = request.path;
    this.query = request.query;
    this.header = request.header;
    this.body = request.body;
  }

  get signal(): AbortSignal {
    return (this.#signal ??= abandonment(this.#res));
  }
}
