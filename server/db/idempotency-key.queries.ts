import type { ExpressionBuilder, Kysely } from 'kysely';
import { IdempotencyKeyInFlightError } from '../domain/errors.js';
import type { ClientKey, UserRepository } from '../domain/user-repository.js';
import type { User, UserFields } from '../domain/user.js';
import type { Write } from './write.js';
import type { Tables } from './tables.js';

/** The idempotency-key half of the user repository. */
type IdempotencyKeyQueries = Pick<UserRepository, 'claimKey' | 'takeOverKey' | 'createWithKey' | 'releaseKey' | 'deleteExpiredKeys'>;

/**
 * Keeps a client's newest `keep` idempotency keys and forgets the rest, so that unique keys cannot grow the
 * table without bound. The count walks the (client, created_at) index, at most `keep` + 1 entries.
 */
async function forgetOldestKeys(trx: Kysely<Tables>, client: string, keep: number): Promise<void> {
  const { n } = await trx
    .selectFrom('idempotency_keys')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('client', '=', client)
    .executeTakeFirstOrThrow();
  const excess = Number(n) - keep;
  if (excess <= 0) return;
  const oldest = trx.selectFrom('idempotency_keys').select('key').where('client', '=', client).orderBy('created_at').orderBy('key').limit(excess);
  await trx.deleteFrom('idempotency_keys').where('client', '=', client).where('key', 'in', oldest).execute();
}

/** The condition that picks one client's key: the primary key since migration 2026-11-25-01. */
const named =
  ({ client, key }: ClientKey) =>
  (eb: ExpressionBuilder<Tables, 'idempotency_keys'>) =>
    eb.and({ client, key });

/**
 * The queries on idempotency keys, run through the store's writer (outages translated); `insertUser` is the
 * repository's own insert, so that a keyed create stores the user and its outcome in one unit.
 */
export function createIdempotencyKeyQueries(
  writing: Write,
  insertUser: (into: Kysely<Tables>, fields: UserFields, now: string) => Promise<User>,
): IdempotencyKeyQueries {
  return {
    claimKey: (name, fingerprint, { owner, now, lockedUntil, expiresAt }, keysPerClient) =>
      writing(async (trx) => {
        await trx.deleteFrom('idempotency_keys').where(named(name)).where('expires_at', '<=', now).execute();
        const { client, key } = name;
        const inserted = await trx
          .insertInto('idempotency_keys')
          .values({ key, fingerprint, state: 'in-flight', owner, client, locked_until: lockedUntil, expires_at: expiresAt, created_at: now })
          .onConflict((oc) => oc.columns(['client', 'key']).doNothing())
          .executeTakeFirst();
        if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) {
          await forgetOldestKeys(trx, client, keysPerClient);
          return { claimed: true as const };
        }
        const row = await trx
          .selectFrom('idempotency_keys')
          .select(['fingerprint', 'state', 'outcome', 'locked_until'])
          .where(named(name))
          .executeTakeFirstOrThrow();
        const record = { fingerprint: row.fingerprint, state: row.state, outcome: row.outcome, lockedUntil: row.locked_until };
        return { claimed: false as const, record };
      }),
    takeOverKey: (name, expiredLock, { owner, lockedUntil }) =>
      writing(async (trx) => {
        const result = await trx
          .updateTable('idempotency_keys')
          .set({ owner, locked_until: lockedUntil })
          .where(named(name))
          .where('state', '=', 'in-flight')
          .where('locked_until', '=', expiredLock)
          .executeTakeFirst();
        return Number(result.numUpdatedRows) > 0;
      }),
    createWithKey: (fields, now, name, owner) => {
      const createAndRecord = async (trx: Kysely<Tables>) => {
        const user = await insertUser(trx, fields, now);
        // The proof of ownership, in the transaction that commits the user: a retry that took the key over
        // meanwhile holds it now, and this unit (user included) is rolled back. On PostgreSQL the update also
        // locks the row, so a takeover that comes later waits for this commit and then finds the key done.
        const recorded = await trx
          .updateTable('idempotency_keys')
          .set({ state: 'done', outcome: JSON.stringify({ created: user }), user_id: user.id })
          .where(named(name))
          .where('state', '=', 'in-flight')
          .where('owner', '=', owner)
          .executeTakeFirst();
        if (Number(recorded.numUpdatedRows) === 0) throw new IdempotencyKeyInFlightError();
        return user;
      };
      return writing(createAndRecord, { atomic: true });
    },
    releaseKey: (name, owner) =>
      writing(async (trx) => {
        await trx.deleteFrom('idempotency_keys').where(named(name)).where('state', '=', 'in-flight').where('owner', '=', owner).execute();
      }),
    deleteExpiredKeys: (now, limit) =>
      writing(async (trx) => {
        // Rows are named by client and key together: a key alone may name live rows of other clients.
        const batch = trx.selectFrom('idempotency_keys').select(['client', 'key']).where('expires_at', '<=', now).limit(limit).$asTuple('client', 'key');
        const deleted = await trx
          .deleteFrom('idempotency_keys')
          .where((eb) => eb(eb.refTuple('client', 'key'), 'in', batch))
          .executeTakeFirst();
        return Number(deleted.numDeletedRows);
      }),
  };
}
