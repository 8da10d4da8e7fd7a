import { contractViolation, findOperationId } from '../support/contract-check.js';

// The component tests trust this checker to fail on responses the contract does not allow: prove it does.

describe('contract checker used by the component tests', () => {
  test('finds operations by method and path', () => {
    expect(findOperationId('GET', '/api/users/2')).toBe('getDemoUser');
    expect(findOperationId('HEAD', '/users')).toBe('listUsers');
    expect(findOperationId('PATCH', '/users/2')).toBe('patchUser');
    expect(findOperationId('PATCH', '/users')).toBeUndefined();
    expect(findOperationId('GET', '/users/2/x')).toBeUndefined();
  });

  test('accepts a conforming response', () => {
    const body = { data: { id: 2, email: 'a@example.com', first_name: 'A', last_name: 'B' } };
    expect(contractViolation('getDemoUser', { status: 200, contentType: 'application/json', body })).toBeUndefined();
  });

  test.each([
    ['an undeclared status', 'getDemoUser', 418, 'application/json', {}],
    ['an unwrapped shape A user', 'getDemoUser', 200, 'application/json', { id: 2, email: 'a@example.com', first_name: 'A', last_name: 'B' }],
    ['an extra member', 'getUser', 200, 'application/json', { id: 2, firstName: 'A', lastName: 'B', email: 'a@example.com', version: 1 }],
    ['a string id', 'getUser', 200, 'application/json', { id: '2', firstName: 'A', lastName: 'B', email: 'a@example.com' }],
    ['a body on 204', 'deleteUser', 204, 'application/json', { ok: true }],
    ['plain JSON for an error', 'getUser', 404, 'application/json', { status: 404 }],
    ['a problem without title', 'getUser', 404, 'application/problem+json', { type: 'x', status: 404, detail: 'd' }],
    ['JSON from the protected resource', 'getProtectedResource', 200, 'application/json', {}],
    ['a non-problem 404 for an unknown route', undefined, 404, 'text/html', '<h1>404</h1>'],
  ])('rejects %s', (_case, operationId, status, contentType, body) => {
    expect(contractViolation(operationId, { status, contentType, body })).toEqual(expect.any(String));
  });

  const user = { id: 2, firstName: 'A', lastName: 'B', email: 'a@example.com' };
  const withHeaders = (headers: Record<string, string>) => new Headers(headers);

  test('accepts declared headers that match their schemas, and ignores the undeclared', () => {
    const headers = withHeaders({ etag: '"3"', 'x-request-id': 'anything at all', ratelimit: '"writes";r=5;t=60' });
    expect(contractViolation('replaceUser', { status: 200, contentType: 'application/json', body: user, headers })).toBeUndefined();
    expect(
      contractViolation('listUsers', { status: 200, contentType: 'application/json', body: [user], headers: withHeaders({ 'x-total-count': '1' }) }),
    ).toBeUndefined();
  });

  test.each([
    ['a weak ETag', 'getUser', 200, { etag: 'W/"3"' }],
    ['a Location that is no user', 'createUser', 201, { location: '/users/abc' }],
    ['a RateLimit of another policy', 'deleteUser', 204, { ratelimit: '"reads";r=5;t=60' }],
    ['an X-Total-Count that is not a number', 'listUsers', 200, { 'x-total-count': 'twelve' }],
  ])('rejects %s', (_case, operationId, status, headers) => {
    const body = status === 204 ? undefined : operationId === 'listUsers' ? [user] : user;
    expect(contractViolation(operationId, { status, contentType: 'application/json', body, headers: withHeaders(headers) })).toEqual(
      expect.stringMatching(/^header /),
    );
  });
});
