import type { UserRecordsHandlers } from '../../generated/server/handlers.js';
import type { HandlerDeps } from './handler-deps.js';
import { createUserOnce } from './idempotent-create.js';
import { etagOf, holdsCurrent, versionCondition } from './preconditions.js';
import { fromDemoUserInput, fromDemoUserPatch, toDemoUser, toDemoUserCreated, toDemoUserPage, toDemoUserPatched, toDemoUserReplaced } from './shape-a.mapper.js';

type ShapeAHandlers = Pick<
  UserRecordsHandlers,
  'listDemoUsers' | 'getDemoUser' | 'createDemoUser' | 'replaceDemoUser' | 'patchDemoUser' | 'deleteDemoUser'
>;

/** Shape A, the "hosted demo" dialect, under `/api`. */
export function createShapeAHandlers({ users, basePath }: HandlerDeps): ShapeAHandlers {
  return {
    async listDemoUsers({ query }) {
      const page = await users.listPage(query.page, query.per_page);
      return { status: 200, body: toDemoUserPage(page), headers: { 'X-Total-Count': String(page.total) } };
    },
    async getDemoUser({ path, header }) {
      const user = await users.get(path.id);
      if (holdsCurrent(header['If-None-Match'], user)) return { status: 304, headers: { ETag: etagOf(user) } };
      return { status: 200, body: { data: toDemoUser(user) }, headers: { ETag: etagOf(user) } };
    },
    async createDemoUser({ body, header, client }) {
      const request = { operationId: 'createDemoUser', body, fields: fromDemoUserInput(body), idempotencyKey: header['Idempotency-Key'], client };
      return createUserOnce(users, request, (user) => ({
        status: 201 as const,
        body: toDemoUserCreated(user, body),
        headers: { Location: `${basePath}/api/users/${user.id}`, ETag: etagOf(user) },
      }));
    },
    async replaceDemoUser({ path, body, header }) {
      const user = await users.replace(path.id, fromDemoUserInput(body), versionCondition(header['If-Match']));
      return { status: 200, body: toDemoUserReplaced(user, body), headers: { ETag: etagOf(user) } };
    },
    async patchDemoUser({ path, body, header }) {
      const user = await users.patch(path.id, fromDemoUserPatch(body), versionCondition(header['If-Match']));
      return { status: 200, body: toDemoUserPatched(user, body), headers: { ETag: etagOf(user) } };
    },
    async deleteDemoUser({ path, header }) {
      await users.remove(path.id, versionCondition(header['If-Match']));
      return { status: 204 };
    },
  };
}
