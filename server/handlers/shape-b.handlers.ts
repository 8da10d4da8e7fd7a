import type { UserRecordsHandlers } from '../../generated/server/handlers.js';
import type { ListedUser } from '../domain/user.js';
import { InvalidParameterError } from '../domain/errors.js';
import type { HandlerDeps } from './handler-deps.js';
import { encodeCursor, FIELDS } from './cursors.js';
import { besideOf, linkHeader, listLink, moreAfter, readListQuery, totalHeaders } from './list-pages.js';
import { createUserOnce } from './idempotent-create.js';
import { etagOf, holdsCurrent, versionCondition } from './preconditions.js';
import { fromLocalUserInput, fromLocalUserPatch, toLocalUser } from './shape-b.mapper.js';
import { timeBound } from '../domain/time-bound.js';

type ShapeBHandlers = Pick<UserRecordsHandlers, 'listUsers' | 'getUser' | 'createUser' | 'replaceUser' | 'patchUser' | 'deleteUser'>;

async function* mapUsers<T>(users: AsyncIterable<ListedUser>, map: (user: ListedUser) => T): AsyncIterable<T> {
  for await (const user of users) yield map(user);
}

/** Shape B, the "local" dialect, without prefix. */
export function createShapeBHandlers({ users, basePath }: HandlerDeps): ShapeBHandlers {
  return {
    async listUsers(request) {
      const { query } = request;
      const { filter, order, position } = readListQuery(query, FIELDS, request);
      if (query.limit === undefined) {
        if (position !== undefined) throw new InvalidParameterError('cursor', 'needs limit: a cursor continues a list read a page at a time');
        const list = await users.list(filter, order);
        return timeBound({ status: 200, body: mapUsers(list.users, toLocalUser), headers: totalHeaders(list) }, list.stoppedShort === true);
      }
      const found = await users.listFrom(filter, order, position, query.limit);
      const tally = await users.count(filter);
      const { next } = besideOf(order, position, { ...found, more: moreAfter(position, found.more) });
      const Link = linkHeader([
        [
          'next',
          next && listLink(`${basePath}/users`, { q: query.q, email: query.email, sort: query.sort, limit: query.limit, cursor: encodeCursor(order, next) }),
        ],
      ]);
      const reply = { status: 200 as const, body: found.users.map(toLocalUser), headers: { ...totalHeaders(tally), ...(Link ? { Link } : {}) } };
      return timeBound(reply, found.stoppedAt !== undefined || tally.stoppedShort === true);
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
