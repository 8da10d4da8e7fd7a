import type { UserRecordsHandlers } from '../../generated/server/handlers.js';
import type { User } from '../domain/user.js';
import type { HandlerDeps } from './handler-deps.js';
import { createUserOnce } from './idempotent-create.js';
import { etagOf, holdsCurrent, versionCondition } from './preconditions.js';
import { fromLocalUserInput, fromLocalUserPatch, toLocalUser } from './shape-b.mapper.js';

type ShapeBHandlers = Pick<UserRecordsHandlers, 'listUsers' | 'getUser' | 'createUser' | 'replaceUser' | 'patchUser' | 'deleteUser'>;

async function* mapUsers<T>(users: AsyncIterable<User>, map: (user: User) => T): AsyncIterable<T> {
  for await (const user of users) yield map(user);
}

/** Shape B, the "local" dialect, without prefix. */
export function createShapeBHandlers({ users, basePath }: HandlerDeps): ShapeBHandlers {
  return {
    async listUsers() {
      const total = await users.count();
      return { status: 200, body: mapUsers(users.streamAll(), toLocalUser), headers: { 'X-Total-Count': String(total) } };
    },
    async getUser({ path, header }) {
      const user = await users.get(path.id);
      if (holdsCurrent(header['If-None-Match'], user)) return { status: 304, headers: { ETag: etagOf(user) } };
      return { status: 200, body: toLocalUser(user), headers: { ETag: etagOf(user) } };
    },
    async createUser({ body, header, client }) {
      const request = { operationId: 'createUser', body, fields: fromLocalUserInput(body), idempotencyKey: header['Idempotency-Key'], client };
      return createUserOnce(users, request, (user) => ({
        status: 201 as const,
        body: toLocalUser(user),
        headers: { Location: `${basePath}/users/${user.id}`, ETag: etagOf(user) },
      }));
    },
    async replaceUser({ path, body, header }) {
      const user = await users.replace(path.id, fromLocalUserInput(body), versionCondition(header['If-Match']));
      return { status: 200, body: toLocalUser(user), headers: { ETag: etagOf(user) } };
    },
    async patchUser({ path, body, header }) {
      const user = await users.patch(path.id, fromLocalUserPatch(body), versionCondition(header['If-Match']));
      return { status: 200, body: toLocalUser(user), headers: { ETag: etagOf(user) } };
    },
    async deleteUser({ path, header }) {
      await users.remove(path.id, versionCondition(header['If-Match']));
      return { status: 204 };
    },
  };
}
