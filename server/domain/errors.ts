/** Base of the errors the domain raises on purpose; the HTTP layer maps each kind to a status. */
export abstract class DomainError extends Error {
  abstract readonly kind: 'not-found' | 'store-unavailable';
}

/** No user has the requested id. */
export class UserNotFoundError extends DomainError {
  readonly kind = 'not-found';
  constructor(readonly id: number) {
    super(`No user has id ${id}.`);
    this.name = 'UserNotFoundError';
  }
}

/** The store cannot be reached or cannot answer; the request may succeed later. */
export class StoreUnavailableError extends DomainError {
  readonly kind = 'store-unavailable';
  constructor(options?: { cause?: unknown }) {
    super('The store is unavailable; try again later.', options);
    this.name = 'StoreUnavailableError';
  }
}
