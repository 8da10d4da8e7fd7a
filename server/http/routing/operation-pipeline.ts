import type { RouteDefinition } from '../../../generated/routes.js';
import type { Principal } from '../../../generated/server/handlers.js';
import type { Contract } from '../contract/contract.js';
import { compileRequestValidator, type RawRequest, type ValidRequest } from '../contract/request-validation.js';
import { examplePicker, type PreferredAnswer } from '../sandbox/preferred-example.js';
import type { AnyHandler, AnyReply } from './replies.js';
import { bodyTypeProblem, emptyBodyProblem, isEmptyBody } from './request-checks.js';

// The checks of one operation, in their order, written once: the Koa router (router.ts) and the fetch dispatch
// that the MSW handlers and the npx sandbox run (fetch-dispatch.ts) both answer through it. Each transport
// says how it reads a request at each step (Transport); the order, and what refuses a request, is here.
// Browser-safe. A step that fails throws the problem that answers the request.

/**
 * How one transport reads its requests (`R`: Koa's Context, or the fetch dispatch's own): made once per
 * operation, its functions take the request, so that a request allocates nothing for them.
 */
export interface Transport<R> {
  /** A request header by its lower-case name; '' when it is absent. */
  header(request: R, name: string): string;
  /** Whether the request carries a body at all (a length, a chunked encoding, a stream). */
  hasBody(request: R): boolean;
  /** Counts a write against its client's limit, or refuses it (the server's; the kit has no limit). */
  readonly countWrite?: ((request: R) => Promise<void>) | undefined;
  /** The body: its text, and its value parsed as JSON (refused when too large or malformed). */
  readBody(request: R): Promise<{ readonly text: string; readonly value: unknown }>;
  /** Who sent a request to a secured operation (or the challenge thrown); undefined for an open one. */
  authenticate(request: R): Promise<Principal | undefined>;
  /** The path's parameters, the query, the headers and the body's value, as the contract's validators read them. */
  raw(request: R, body: unknown): RawRequest;
  /** A reply cached for this request, if the transport caches replies (the server's reply cache). */
  readonly cachedReply?: ((request: R) => unknown) | undefined;
  /** What the handler is given: the valid request, who sent it, and the transport's own (client, signal). */
  handlerInput(request: R, valid: ValidRequest, principal: Principal | undefined): unknown;
}

/** How a request was answered: by an example it asked for (Prefer), by a reply the transport cached, or by its handler. */
export type Answer = { readonly example: PreferredAnswer } | { readonly cached: unknown } | { readonly reply: AnyReply };

/** What an operation runs on: its route, the contract that checks it, its handler; and whether `Prefer` picks examples. */
export interface OperationSpec {
  readonly route: RouteDefinition;
  readonly contract: Contract;
  readonly handler: AnyHandler;
  /** Whether a `Prefer: code=` header is answered from the contract's examples (sandbox mode, the kit). */
  readonly answersPrefer: boolean;
  /**
   * When the request validator is compiled: at once (the server: a contract it cannot compile fails the
   * start), or when the operation is first asked for (the kit: a test of three operations compiles three).
   */
  readonly compile: 'now' | 'on first use';
}

/** An operation's checks and handler, as one function of a transport's request. */
export function compileOperation<R>(
  { route, contract, handler, answersPrefer, compile }: OperationSpec,
  transport: Transport<R>,
): (request: R) => Promise<Answer> {
  let validate = compile === 'now' ? compileRequestValidator(contract, route.operationId) : undefined;
  let pick = answersPrefer && compile === 'now' ? examplePicker(contract, route) : undefined;
  const { countWrite, cachedReply } = transport;
  return async (request) => {
    // 1. An example the request asks for (Prefer: code=, example=), before anything else runs.
    if (answersPrefer) {
      const prefer = transport.header(request, 'prefer');
      const example = prefer === '' ? undefined : (pick ??= examplePicker(contract, route))(prefer);
      if (example) return { example };
    }
    // 2. The client's write limit, before a byte of the body is read.
    if (countWrite) await countWrite(request);
    // 3. The body's media type and coding, then the body itself (bounded, parsed).
    let text = '';
    let value: unknown;
    if (route.hasBody) {
      const problem = bodyTypeProblem(
        transport.header(request, 'content-type'),
        transport.hasBody(request),
        route.bodyTypes,
        transport.header(request, 'content-encoding'),
      );
      if (problem) throw problem;
      ({ text, value } = await transport.readBody(request));
    }
    // 4. Credentials: a request without them is challenged before its body is judged further.
    const principal = await transport.authenticate(request);
    // 5. An empty body, then the request against the contract.
    if (route.hasBody && isEmptyBody(text)) throw emptyBodyProblem();
    const valid = (validate ??= compileRequestValidator(contract, route.operationId))(transport.raw(request, value));
    // 6. A reply cached for this very request, else the handler.
    const cached = cachedReply?.(request);
    if (cached !== undefined) return { cached };
    return { reply: await handler(transport.handlerInput(request, valid, principal)) };
  };
}
