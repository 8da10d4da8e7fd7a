import { basicAuth } from '../support/http-client.js';
import { TEST_CREDENTIALS, useTestServer } from '../support/test-server.js';
import { describeEachDialect } from '../support/test-store.js';

describeEachDialect((dialect) => {
  // Many failed attempts on purpose: the brute-force guard is tested in brute-force.test.ts.
  const sut = useTestServer({ dialect, env: { AUTH_MAX_FAILURES: '1000' } });

  const CHALLENGE = 'Basic realm="user-records", charset="UTF-8"';
  const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

  describe.each(['/protected-resource', '/api/protected-resource'])('GET %s', (path) => {
    test('200 text/plain with the right credentials', async () => {
      const res = await sut.api.get(path, { headers: { ...basicAuth(), 'Custom-Header': 'hello', 'x-custom-header': 'x' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(res.body).toBe(`Hello, ${TEST_CREDENTIALS.username}. You are authenticated.`);
      expect(res.headers.get('set-cookie')).toBeNull();
    });

    test('the custom headers take what HTTP carries as it is: visible ASCII and spaces; other bytes are a 400 naming the header', async () => {
      const plain = await sut.api.get(path, { headers: { ...basicAuth(), 'Custom-Header': 'any text, even "quoted" ~!@#', 'x-custom-header': 'a b' } });
      expect(plain.status).toBe(200);
      for (const [name, value] of [
        ['Custom-Header', 'caf\u00e9'],
        ['x-custom-header', '\u00ff'],
      ] as const) {
        const res = await sut.api.get(path, { headers: { ...basicAuth(), [name]: value } });
        expect(res.status).toBe(400);
        expect(res.body.errors).toEqual([{ path: `/${name}`, message: 'must be visible ASCII characters and spaces' }]);
      }
    });

    test('the scheme word is case-insensitive', async () => {
      const token = b64(`${TEST_CREDENTIALS.username}:${TEST_CREDENTIALS.password}`);
      expect((await sut.api.get(path, { headers: { authorization: `basic ${token}` } })).status).toBe(200);
    });

    test.each([
      ['no Authorization header', undefined],
      ['wrong password', basicAuth(TEST_CREDENTIALS.username, 'wrong').authorization],
      ['unknown user', basicAuth('mallory', TEST_CREDENTIALS.password).authorization],
      ['password as a prefix', basicAuth(TEST_CREDENTIALS.username, TEST_CREDENTIALS.password.slice(0, -1)).authorization],
      ['empty credentials', `Basic ${b64(':')}`],
      ['no colon', `Basic ${b64(TEST_CREDENTIALS.username)}`],
      ['Bearer scheme', 'Bearer abc.def.ghi'],
      ['scheme only', 'Basic'],
      ['not base64', 'Basic !!!not-base64!!!'],
      ['broken base64 length', 'Basic a'],
      ['NUL bytes', `Basic ${b64('\u0000:\u0000')}`],
      ['very long token', `Basic ${'A'.repeat(6000)}`],
    ])('401 with the Basic challenge for %s', async (_case, authorization) => {
      const res = await sut.api.get(path, { headers: authorization === undefined ? {} : { authorization } });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe(CHALLENGE);
      expect(res.body).toMatchObject({ type: 'urn:user-records:problem:unauthorized', status: 401, instance: path });
      expect(res.text).not.toContain(TEST_CREDENTIALS.password);
    });
  });

  test('the user endpoints need no credentials', async () => {
    expect((await sut.api.get('/users/1')).status).toBe(200);
    expect((await sut.api.get('/api/users/1')).status).toBe(200);
  });
});
