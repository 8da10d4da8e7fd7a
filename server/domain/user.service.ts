import { UserNotFoundError } from './errors.js';
import type { UserRepository } from './user-repository.js';
import type { User, UserFields, UserPage } from './user.js';

/** The operations on user records that both wire shapes share. */
export interface UserService {
  create(fields: UserFields): Promise<User>;
  get(id: number): Promise<User>;
  listAll(): Promise<User[]>;
  listPage(page: number, perPage: number): Promise<UserPage>;
  replace(id: number, fields: UserFields): Promise<User>;
  remove(id: number): Promise<void>;
}

/** Returns the current instant as ISO 8601; injectable so that tests can pin time. */
export type Clock = () => string;

const systemClock: Clock = () => new Date().toISOString();

/** Builds the user service over a repository; unknown ids become UserNotFoundError. */
export function createUserService(repository: UserRepository, clock: Clock = systemClock): UserService {
  const found = (id: number, user: User | undefined): User => {
    if (!user) throw new UserNotFoundError(id);
    return user;
  };
  return {
    create: (fields) => repository.create(fields, clock()),
    get: async (id) => found(id, await repository.findById(id)),
    listAll: () => repository.listAll(),
    async listPage(page, perPage) {
      const { users, total } = await repository.listSlice((page - 1) * perPage, perPage);
      return { users, page, perPage, total, totalPages: Math.ceil(total / perPage) };
    },
    replace: async (id, fields) => found(id, await repository.replace(id, fields, clock())),
    async remove(id) {
      if (!(await repository.delete(id))) throw new UserNotFoundError(id);
    },
  };
}
