import type { UserRecordsHandlers } from '../../generated/server/handlers.js';
import type { HandlerDeps } from './handler-deps.js';
import { fromLocalUserInput, toLocalUser } from './shape-b.mapper.js';

type ShapeBHandlers = Pick<UserRecordsHandlers, 'listUsers' | 'getUser' | 'createUser' | 'replaceUser' | 'deleteUser'>;

/** Shape B, the "local" dialect, without prefix. */
export function createShapeBHandlers({ users, basePath }: HandlerDeps): ShapeBHandlers {
  return {
    async listUsers() {
      return { status: 200, body: (await users.listAll()).map(toLocalUser) };
    },
    async getUser({ path }) {
      return { status: 200, body: toLocalUser(await users.get(path.id)) };
    },
    async createUser({ body }) {
      const user = await users.create(fromLocalUserInput(body));
      return { status: 201, body: toLocalUser(user), headers: { Location: `${basePath}/users/${user.id}` } };
    },
    async replaceUser({ path, body }) {
      return { status: 200, body: toLocalUser(await users.replace(path.id, fromLocalUserInput(body))) };
    },
    async deleteUser({ path }) {
      await users.remove(path.id);
      return { status: 204 };
    },
  };
}
