/** The kinds of error the domain raises on purpose; the HTTP layer maps each to a status. */
export type DomainErrorKind =
  | 'not-found'
  | 'precondition-failed'
  | 'idempotency-key-reused'
  | 'idempotency-key-in-flight'
  | 'store-unavailable'
  | 'write-outcome-unknown'
  | 'searches-busy'
  | 'client-closed-request'
  | 'invalid-parameter';

/** Base of the errors the domain raises on purpose; each is named after its class. */
export abstract class DomainError extends Error {
  abstract readonly kind: DomainErrorKind;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** No user has the requested id. */
export class UserNotFoundError extends DomainError {
  readonly kind = 'not-found';
  constructor(readonly id: number) {
    super(`No user has id ${id}.`);
  }
}

/** The client's precondition names none of the user's current version (it changed, or never was one); nothing was changed. */
export class PreconditionFailedError extends DomainError {
  readonly kind = 'precondition-failed';
  constructor(
    readonly id: number,
    readonly currentVersion: number,
  ) {
    super(`User ${id} is at version ${currentVersion}, which If-Match does not name; nothing was changed.`);
  }
}

/** An idempotency key came back with a different request than the one it was first used for. */
export class IdempotencyKeyReusedError extends DomainError {
  readonly kind = 'idempotency-key-reused';
  constructor() {
    super('This Idempotency-Key was used with a different request body.');
  }
}

/** The first request with this idempotency key is still being processed. */
export class IdempotencyKeyInFlightError extends DomainError {
  readonly kind = 'idempotency-key-in-flight';
  constructor() {
    super('A request with this Idempotency-Key is still being processed; retry later.');
  }
}

/**
 * The store cannot be reached or cannot answer; the request may succeed later. A write refused with it was
 * not made, and is never made later: a retry makes no duplicate.
 */
export class StoreUnavailableError extends DomainError {
  readonly kind: 'store-unavailable' | 'write-outcome-unknown' = 'store-unavailable';
  /** The store's own code for the fault (e.g. `57P01`, `SQLITE_FULL`, `QUERY_TIMEOUT`), for logs. */
  readonly code: string;
  constructor(options?: { cause?: unknown; code?: string }, message = 'The store is unavailable; try again later.') {
    super(message, options);
    this.code = options?.code ?? 'UNKNOWN';
  }
}

/**
 * A write that had begun when its request's time ran out, and whose commit the store has not confirmed: it
 * may or may not have been made. An outage like any other (logged, counted, readiness), but the one answer to
 * a write that does not say it was not made; a create's Idempotency-Key tells its client which it was.
 */
export class WriteOutcomeUnknownError extends StoreUnavailableError {
  override readonly kind = 'write-outcome-unknown';
  constructor(options?: { cause?: unknown; code?: string }) {
    super(options, 'The write may or may not have been made: the store did not confirm it in time. Repeat a create with its Idempotency-Key to learn which.');
  }
}

/** A parameter that has the form the contract asks for, but does not make sense, such as a forged cursor. */
export class InvalidParameterError extends DomainError {
  readonly kind = 'invalid-parameter';
  constructor(
    /** The parameter's name, as the request gave it. */
    readonly parameter: string,
    /** What is wrong with it, as the end of a sentence that starts with its name. */
    readonly problem: string,
  ) {
    super(`The parameter ${parameter} ${problem}.`);
  }
}

/**
 * So many searches are under way that another would wait longer than a client should (`queue-full`), or this
 * client has as many waiting as its share (`client-share`); retry shortly.
 */
export class SearchesBusyError extends DomainError {
  readonly kind = 'searches-busy';
  constructor(readonly reason: 'queue-full' | 'client-share') {
    super(
      reason === 'queue-full'
        ? 'Too many searches are under way; try again in 1 second.'
        : 'This client has as many searches waiting as it may; try again in 1 second.',
    );
  }
}

/** The client went away before its answer was ready; the work for it stopped, and nobody reads the answer. */
export class RequestAbandonedError extends DomainError {
  readonly kind = 'client-closed-request';
  constructor() {
    super('The client closed the connection before its answer was ready; the work for it was stopped.');
  }
}
