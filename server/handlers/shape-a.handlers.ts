import type { UserRecordsHandlers } from '../../generated/server/handlers.js';
import { keysOf, NUMBERED_PAGES_REACH, type ListPosition, type SortField } from '../domain/user-query.js';
import type { UserPage } from '../domain/user.js';
import type { HandlerDeps } from './handler-deps.js';
import { encodeCursor, linkHeader, listLink, moreAfter, readListQuery } from './list-pages.js';
import { createUserOnce } from './idempotent-create.js';
import { etagOf, holdsCurrent, versionCondition } from './preconditions.js';
import { fromDemoUserInput, fromDemoUserPatch, toDemoUser, toDemoUserCreated, toDemoUserPage, toDemoUserPatched, toDemoUserReplaced } from './shape-a.mapper.js';

/** Shape A's names of the fields a list sorts by. */
const DEMO_SORT_FIELDS: Readonly<Record<string, SortField>> = { id: 'id', email: 'email', first_name: 'firstName', last_name: 'lastName' };

type ShapeAHandlers = Pick<
  UserRecordsHandlers,
  'listDemoUsers' | 'getDemoUser' | 'createDemoUser' | 'replaceDemoUser' | 'patchDemoUser' | 'deleteDemoUser'
>;

/** Shape A, the "hosted demo" dialect, under `/api`. */
export function createShapeAHandlers({ users, basePath }: HandlerDeps): ShapeAHandlers {
  return {
    async listDemoUsers(request) {
      const { query } = request;
      const { filter, order, position } = readListQuery(query, DEMO_SORT_FIELDS, () => request.signal);
      const { page: number, per_page: perPage } = query;
      let page: UserPage;
      if (position === undefined) {
        page = await users.listPage(filter, order, number, perPage);
      } else {
        // A page a link named: found by key, and numbered as the link says.
        const total = await users.count(filter);
        const totalPages = Math.ceil(total / perPage);
        const onLastPage = Math.min(Math.max(total - (number - 1) * perPage, 1), perPage);
        const limit = 'before' in position && position.before === 'end' ? onLastPage : perPage;
        const found = await users.listFrom(filter, order, position, limit);
        page = { users: found.users, more: moreAfter(position, found.more), page: number, perPage, total, totalPages };
      }
      const link = (to: number, at?: ListPosition) =>
        listLink(`${basePath}/api/users`, { page: to, per_page: perPage, q: query.q, email: query.email, sort: query.sort, cursor: at && encodeCursor(order, at) });
      // An empty page's previous: by number where numbers reach, else the last page, by its cursor.
      const towards = (to: number) => (to * perPage <= NUMBERED_PAGES_REACH ? link(to) : link(page.totalPages, { before: 'end' }));
      const [first, last] = [page.users[0], page.users[page.users.length - 1]];
      const previous = number <= 1 ? undefined : number === 2 ? link(1) : first ? link(number - 1, { before: keysOf(first, order) }) : towards(Math.min(number - 1, Math.max(page.totalPages, 1)));
      const Link = linkHeader([
        ['first', link(1)],
        ['prev', previous],
        ['next', page.more && last ? link(number + 1, { after: keysOf(last, order) }) : undefined],
        ['last', page.totalPages <= 1 ? link(1) : link(page.totalPages, { before: 'end' })],
      ])!;
      return { status: 200, body: toDemoUserPage(page), headers: { 'X-Total-Count': String(page.total), Link } };
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
