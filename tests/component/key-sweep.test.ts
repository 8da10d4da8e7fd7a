import { createUserRepository } from '../../server/db/sql-user-repository.js';
import { createUserService, KEY_SWEEP_BATCH_SIZE } from '../../server/domain/user.service.js';
import { withTestServer } from '../support/test-server.js';
import { describeEachDialect } from '../support/test-store.js';

// The sweep of expired idempotency keys deletes in batches (so that it never holds the event loop or the
// store for long): across several batches it must still delete every expired key, and only those.

/** An idempotency key row of a client that expires at `expiresAt`. */
const keyRow = (key: string, expiresAt: string, client = '127.0.0.1') => ({
  client,
  key,
  fingerprint: 'f',
  state: 'done' as const,
  locked_until: expiresAt,
  expires_at: expiresAt,
  created_at: expiresAt,
});

/**
 * An instant after the server started and before now: the server's own start-up sweep (which may still be
 * running when the test writes its keys) does not see such keys as expired, a sweep from now on does. The
 * start-up sweep takes its instant as the server starts, to the millisecond: the keys' instant is taken a few
 * milliseconds later, never in the same one (the start-up sweep, waiting behind the writer thread's start on
 * a busy machine, then deleted them beside the test's own sweep).
 */
async function justExpired(): Promise<string> {
  const pause = () => new Promise((resolve) => setTimeout(resolve, 5));
  await pause();
  const instant = new Date().toISOString();
  await pause();
  return instant;
}

describeEachDialect((dialect) => {
  test('the sweep deletes every expired key across several batches, and keeps the live ones', () =>
    withTestServer({ dialect }, async (server) => {
      const expired = KEY_SWEEP_BATCH_SIZE * 2 + 7;
      const past = await justExpired();
      const future = new Date(Date.now() + 60_000).toISOString();
      // Another client's live keys of the same text as expired ones: keys are the client's own, and so is their time.
      const rows = [
        ...Array.from({ length: expired }, (_, i) => keyRow(`old-${i}`, past)),
        ...['live-a', 'live-b', 'old-0', 'old-1'].map((key) => keyRow(key, future, '127.0.0.2')),
      ];
      for (let i = 0; i < rows.length; i += 500)
        await server.database.db
          .insertInto('idempotency_keys')
          .values(rows.slice(i, i + 500))
          .execute();

      const users = createUserService(createUserRepository(server.database));
      expect(await users.sweepExpiredKeys()).toBe(expired);
      const left = await server.database.db.selectFrom('idempotency_keys').select(['client', 'key']).orderBy('key').execute();
      expect(left).toEqual(['live-a', 'live-b', 'old-0', 'old-1'].map((key) => ({ client: '127.0.0.2', key })));
      expect(await users.sweepExpiredKeys()).toBe(0);
    }));

  test('an aborted sweep stops after the batch in progress', () =>
    withTestServer({ dialect }, async (server) => {
      const past = await justExpired();
      const rows = Array.from({ length: KEY_SWEEP_BATCH_SIZE * 3 }, (_, i) => keyRow(`old-${i}`, past));
      for (let i = 0; i < rows.length; i += 500)
        await server.database.db
          .insertInto('idempotency_keys')
          .values(rows.slice(i, i + 500))
          .execute();
      const stop = new AbortController();
      stop.abort();
      expect(await createUserService(createUserRepository(server.database)).sweepExpiredKeys(stop.signal)).toBe(KEY_SWEEP_BATCH_SIZE);
    }));
});
