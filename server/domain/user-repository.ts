import type { User, UserFields } from './user.js';

/** Storage of user records. Implementations translate store outages into StoreUnavailableError. */
export interface UserRepository {
  create(fields: UserFields, now: string): Promise<User>;
  findById(id: number): Promise<User | undefined>;
  /** Every user, in id order. */
  listAll(): Promise<User[]>;
  /** Users in id order after skipping `offset`, at most `limit` of them, and the size of the collection. */
  listSlice(offset: number, limit: number): Promise<{ users: User[]; total: number }>;
  /** Replaces the fields and bumps the version; undefined when no user has the id. */
  replace(id: number, fields: UserFields, now: string): Promise<User | undefined>;
  /** False when no user has the id. */
  delete(id: number): Promise<boolean>;
}
