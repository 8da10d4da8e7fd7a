import { getResponse } from 'msw';
import { createSandboxClient, preferFor } from '../../client/src/index.js';
import { createMockHandlers } from '../../client/src/msw.js';
import { useTestServer } from '../support/test-server.js';

// preferFor against the two transports that answer Prefer: a real server in sandbox mode, and the MSW handlers.
// A Prefer in the client's headers would reach every operation, and `GET /users`, which declares no 429,
// would answer 400 to `code=429`: preferFor sends it to the operations named alone.

const sut = useTestServer({ env: { SANDBOX: 'true' } });
const handlers = createMockHandlers({ baseUrl: 'http://sandbox.test' });
const transports = {
  'the sandbox server': () => createSandboxClient({ baseUrl: sut.server.url }),
  'the MSW handlers': () => createSandboxClient({ baseUrl: 'http://sandbox.test', fetch: async (request) => (await getResponse(handlers, request))! }),
};
const ada = { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' };

describe.each(Object.entries(transports))('%s', (_name, sandboxClient) => {
  test('preferFor sends Prefer to the operations it names and to no others; a call that sends its own keeps it', async () => {
    const sandbox = sandboxClient();
    sandbox.use(preferFor({ 'POST /users': 'code=429', 'GET /users/{id}': 'code=404' }));
    const refused = await sandbox.POST('/users', { body: ada });
    expect(refused).toMatchObject({ status: 429, error: { type: 'urn:user-records:problem:too-many-writes' } });
    expect(refused.response.headers.get('preference-applied')).toBe('code=429, example=tooManyWrites');
    expect((await sandbox.GET('/users/{id}', { params: { path: { id: 2 } } })).status).toBe(404);
    const list = await sandbox.GET('/users');
    expect([list.status, list.response.headers.get('preference-applied')]).toEqual([200, null]);
    expect((await sandbox.PATCH('/users/{id}', { params: { path: { id: 2 } }, body: { lastName: 'Wren' } })).status).toBe(200);
    const own = await sandbox.POST('/users', { body: ada, params: { header: { Prefer: 'code=422, example=invalidEmail' } } });
    expect(own.status).toBe(422);
    // The examples are answers only: no user was created.
    expect(list.data).toHaveLength(12);
    expect((await sandbox.GET('/users')).data).toHaveLength(12);
  });
});
