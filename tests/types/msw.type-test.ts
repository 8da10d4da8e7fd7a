import { createMockHandlers } from '../../client/src/msw.js';

// Compiled by `tsc --noEmit` (make test), never run: each @ts-expect-error must meet a real type error.

export function mswTypeTests(): void {
  const baseUrl = 'http://api.test';

  // The first users are shape B users as POST /users takes them.
  createMockHandlers({ baseUrl, users: [{ firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' }] });
  // @ts-expect-error firstName is a string
  createMockHandlers({ baseUrl, users: [{ firstName: 1, lastName: 'Lovelace', email: 'ada@example.com' }] });
  // @ts-expect-error shape B users have firstName and lastName, not shape A's name
  createMockHandlers({ baseUrl, users: [{ name: 'Ada Lovelace', email: 'ada@example.com' }] });
  // @ts-expect-error emial is no member of a user
  createMockHandlers({ baseUrl, users: [{ firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', emial: 'ada@example.com' }] });
  // @ts-expect-error email is required
  createMockHandlers({ baseUrl, users: [{ firstName: 'Ada', lastName: 'Lovelace' }] });
}
