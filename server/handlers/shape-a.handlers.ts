import type { UserRecordsHandlers } from '../../generated/server/handlers.js';
import { NUMBERED_PAGES_REACH, type ListPosition, type SortField } from '../domain/user-query.js';
import type { UserPage } from '../domain/user.js';
import type { HandlerDeps } from './handler-deps.js';
import { encodeCursor } from './cursors.js';
import { besideOf, linkHeader, listLink, moreAfter, readListQuery, totalHeaders } from './list-pages.js';
import { createUserOnce } from './idempotent-create.js';
import { etagOf, holdsCurrent, versionCondition } from './preconditions.js';
import { timeBound } from '../domain/time-bound.js';
import {
  fromDemoUserInput,
  fromDemoUserPatch,
  toDemoUser,
  toDemoUserCreated,
  toDemoUserPage,
  toDemoUserPatched,
  toDemoUserReplaced,
} from './shape-a.mapper.js';

/** Shape A's names of the fields a list sorts by. */
const DEMO_SORT_FIELDS: Readonly<Record<string, SortField>> = { id: 'id', email: 'email', first_name: 'firstName', last_name: 'lastName' };

type ShapeAHandlers = Pick<UserRecordsHandlers, 'listDemoUsers' | 'getDemoUser' | 'createDemoUser' | 'replaceDemoUser' | 'patchDemoUser' | 'deleteDemoUser'>;

/** Shape A, the "hosted demo" dialect, under `/api`. */
export function createShapeAHandlers({ users, basePath }: HandlerDeps): ShapeAHandlers {
  return {
    async listDemoUsers(request) {
      const { query } = request;
      const { filter, order, position } = readListQuery(query, DEMO_SORT_FIELDS, request);
      const { page: number, per_page: perPage } = query;
      let page: UserPage;
      /** Whether users precede a page read backwards (its number may not tell: see below). */
      let precedes = false;
      if (position === undefined) {
        page = await users.listPage(filter, order, number, perPage);
      } else {
        // A page a link named: found by key, and numbered as the link says.
        const { total, exact, stoppedShort } = await users.count(filter);
        const totalPages = Math.ceil(total / perPage);
        const onLastPage = Math.min(Math.max(total - (number - 1) * perPage, 1), perPage);
        const limit = 'before' in position && position.before === 'end' && exact ? onLastPage : perPage;
        const { users: found, more, stoppedAt } = await users.listFrom(filter, order, position, limit);
        precedes = 'before' in position && (more || stoppedAt !== undefined);
        page = {
          users: found,
          more: moreAfter(position, more),
          ...(stoppedAt && { stoppedAt }),
          page: number,
          perPage,
          total,
          exact,
          ...(stoppedShort && { stoppedShort }),
          totalPages,
        };
      }
      const link = (to: number, at?: ListPosition) =>
        listLink(`${basePath}/api/users`, {
          page: to,
          per_page: perPage,
          q: query.q,
          email: query.email,
          sort: query.sort,
          cursor: at && encodeCursor(order, at),
        });
      // An empty page's previous: by number where numbers reach, else the last page, by its cursor.
      const towards = (to: number) => (to * perPage <= NUMBERED_PAGES_REACH ? link(to) : link(page.totalPages, { before: 'end' }));
      const { next, prev } = besideOf(order, position, page);
      // Numbers follow from an exact count of full pages. Where a count is a lower bound or a read stopped
      // short, a page read backwards (the last, and each previous from it) is numbered only as a label, so
      // whether a previous page exists, and where it starts, comes from the read itself.
      const numbered = page.exact && page.stoppedAt === undefined;
      const previous =
        position !== undefined && 'before' in position && !numbered
          ? precedes && prev
            ? link(Math.max(number - 1, 1), prev)
            : undefined
          : number <= 1
            ? undefined
            : number === 2
              ? link(1)
              : prev
                ? link(number - 1, prev)
                : towards(Math.min(number - 1, Math.max(page.totalPages, 1)));
      const Link = linkHeader([
        ['first', link(1)],
        ['prev', previous],
        ['next', next && link(number + 1, next)],
        // A count that is not exact stops short of the end, which reading backwards from it always reaches.
        ['last', page.totalPages <= 1 && page.exact ? link(1) : link(Math.max(page.totalPages, 1), { before: 'end' })],
      ])!;
      return timeBound(
        { status: 200 as const, body: toDemoUserPage(page), headers: { ...totalHeaders(page), Link } },
        page.stoppedAt !== undefined || page.stoppedShort === true,
      );
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
