import type { UserRecordsHandlers } from '../../generated/server/handlers.js';
import type { HandlerDeps } from './handler-deps.js';
import { fromDemoUserInput, toDemoUser, toDemoUserCreated, toDemoUserPage, toDemoUserReplaced } from './shape-a.mapper.js';

type ShapeAHandlers = Pick<
  UserRecordsHandlers,
  'listDemoUsers' | 'getDemoUser' | 'createDemoUser' | 'replaceDemoUser' | 'deleteDemoUser'
>;

/** Shape A, the "hosted demo" dialect, under `/api`. */
export function createShapeAHandlers({ users, basePath }: HandlerDeps): ShapeAHandlers {
  return {
    async listDemoUsers({ query }) {
      return { status: 200, body: toDemoUserPage(await users.listPage(query.page, query.per_page)) };
    },
    async getDemoUser({ path }) {
      return { status: 200, body: { data: toDemoUser(await users.get(path.id)) } };
    },
    async createDemoUser({ body }) {
      const user = await users.create(fromDemoUserInput(body));
      const headers = { Location: `${basePath}/api/users/${user.id}` };
      return { status: 201, body: toDemoUserCreated(user, body), headers };
    },
    async replaceDemoUser({ path, body }) {
      const user = await users.replace(path.id, fromDemoUserInput(body));
      return { status: 200, body: toDemoUserReplaced(user, body) };
    },
    async deleteDemoUser({ path }) {
      await users.remove(path.id);
      return { status: 204 };
    },
  };
}
