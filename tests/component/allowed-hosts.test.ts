import { getWithHost } from '../support/host-request.js';
import { TEST_CREDENTIALS, withTestServer } from '../support/test-server.js';

// DNS rebinding: a page on another site points its own name at 127.0.0.1 and reads what the server answers,
// the protected resource with a developer's credentials included. A server on a loopback address answers the
// names no page can take over (its IP addresses, localhost and its subdomains) and those ALLOWED_HOSTS lists;
// any other Host is a 421. Elsewhere (HOST=0.0.0.0, behind a proxy) it answers any, unless ALLOWED_HOSTS names some.

const authorization = `Basic ${Buffer.from(`${TEST_CREDENTIALS.username}:${TEST_CREDENTIALS.password}`).toString('base64')}`;
/** GET `path` naming this Host, with the test's credentials. */
const get = (url: string, path: string, host: string) => getWithHost(url, path, host, { authorization });

test('on a loopback address, a page rebound to the server under another name gets 421, and nothing of the protected resource', async () => {
  await withTestServer({}, async (server) => {
    const port = new URL(server.url).port;
    for (const path of ['/protected-resource', '/api/users/2', '/users', '/healthz', '/docs']) {
      const refused = await get(server.url, path, `rebind.example:${port}`);
      expect(refused.status).toBe(421);
      expect(JSON.parse(refused.body)).toEqual({
        type: 'urn:user-records:problem:misdirected-request',
        title: 'Misdirected Request',
        status: 421,
        detail: 'This server does not answer for the host rebind.example: it answers its IP addresses, localhost, and the names ALLOWED_HOSTS lists.',
        instance: path,
      });
    }
    // The names no page can take over, with or without the port, in any case.
    for (const host of [`127.0.0.1:${port}`, '127.0.0.1', `localhost:${port}`, 'LOCALHOST', `app.localhost:${port}`, `[::1]:${port}`, '10.0.0.7']) {
      expect({ host, status: (await get(server.url, '/protected-resource', host)).status }).toEqual({ host, status: 200 });
    }
  });
});

test('ALLOWED_HOSTS names the hosts a proxy in front sends, besides those', async () => {
  await withTestServer({ env: { ALLOWED_HOSTS: 'users.example.com, API.example.com' } }, async (server) => {
    expect((await get(server.url, '/api/users/2', 'users.example.com')).status).toBe(200);
    expect((await get(server.url, '/api/users/2', 'api.example.com:8443')).status).toBe(200);
    expect((await get(server.url, '/api/users/2', '127.0.0.1')).status).toBe(200);
    expect((await get(server.url, '/api/users/2', 'other.example.com')).status).toBe(421);
  });
});

test('listening on every address, the server answers any Host unless ALLOWED_HOSTS names some; ALLOWED_HOSTS=* answers any on loopback', async () => {
  await withTestServer({ env: { HOST: '0.0.0.0' } }, async (server) => {
    expect((await get(server.url.replace('0.0.0.0', '127.0.0.1'), '/api/users/2', 'any.example')).status).toBe(200);
  });
  await withTestServer({ env: { HOST: '0.0.0.0', ALLOWED_HOSTS: 'users.example.com' } }, async (server) => {
    expect((await get(server.url.replace('0.0.0.0', '127.0.0.1'), '/api/users/2', 'any.example')).status).toBe(421);
  });
  await withTestServer({ env: { ALLOWED_HOSTS: '*' } }, async (server) => {
    expect((await get(server.url, '/api/users/2', 'any.example')).status).toBe(200);
  });
});
