import { StoreUnavailableError } from '../domain/errors.js';
import type { Database } from './database.js';
import type { Write } from './write.js';
import { StoreFault } from './outage.js';

/**
 * How long a write that failed for an outage keeps readiness down, unless a write succeeds sooner: what
 * the next request would meet (a full disk, a read-only standby), without writing anything to find out.
 */
export const WRITE_OUTAGE_READINESS_MS = 5000;

/** Store access with outages translated for the domain, and what readiness needs to know of them. */
export interface StoreGuard {
  /** Runs store work; an outage surfaces as StoreUnavailableError (503), anything else as it is (a bug). */
  guard<T>(work: () => Promise<T>): Promise<T>;
  /** The store's writer, guarded; a write that fails for an outage is remembered for readiness. */
  readonly writing: Write;
  /** Resolves when a request would find the store working; StoreUnavailableError otherwise. */
  ready(): Promise<void>;
}

/** Guards one database's reads and writes; cheap enough for every request and every readiness poll. */
export function createStoreGuard({ write, outage, probe }: Database): StoreGuard {
  async function guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      // Decided below already (a refusal, an unknown outcome): as it is.
      if (error instanceof StoreUnavailableError) throw error;
      const code = outage(error);
      throw code === undefined ? error : new StoreUnavailableError({ cause: error, code });
    }
  }
  let lastWriteOutage: { at: number; code: string } | undefined;
  const writing: Write = async (work, options) => {
    try {
      const value = await guard(() => write(work, options));
      lastWriteOutage = undefined;
      return value;
    } catch (error) {
      if (error instanceof StoreUnavailableError) lastWriteOutage = { at: Date.now(), code: error.code };
      throw error;
    }
  };
  const ready = () =>
    guard(async () => {
      await probe();
      if (lastWriteOutage && Date.now() - lastWriteOutage.at < WRITE_OUTAGE_READINESS_MS) {
        throw new StoreFault(lastWriteOutage.code, 'the latest write failed for an outage');
      }
    });
  return { guard, writing, ready };
}
