import SqliteDatabase from 'better-sqlite3';
import { sendRaw } from '../hostile/raw-http.js';
import { buildUserInput } from '../support/builders.js';
import { storedCount } from '../support/stored.js';
import { useTestServer, withTestServer } from '../support/test-server.js';
import { describeEachDialect, postgresQuery } from '../support/test-store.js';

// The error statuses of DESIGN.md, each answered as application/problem+json (checked by httpClient).

describeEachDialect((dialect) => {
  const sut = useTestServer({ dialect, env: { BODY_LIMIT_BYTES: '4096' } });

  const JSON_TYPE = { 'content-type': 'application/json' };

  describe('400: a body that is not JSON', () => {
    test.each([
      ['truncated object', '{"firstName": "A"'],
      ['trailing comma', '{"firstName": "A",}'],
      ['single quotes', "{'firstName': 'A'}"],
      ['bare word', 'hello'],
    ])('%s', async (_case, raw) => {
      const before = await storedCount(sut.server);
      const res = await sut.api.request('POST', '/users', { raw, headers: JSON_TYPE });
      expect(res.status).toBe(400);
      expect(res.body.type).toBe('urn:user-records:problem:malformed-json');
      expect(await storedCount(sut.server)).toBe(before);
    });

    test('an empty body', async () => {
      const res = await sut.api.request('PUT', '/api/users/1', { raw: '', headers: JSON_TYPE });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/empty/);
    });

    test.each(['POST /users', 'PUT /api/users/1'])('%s with Content-Type: application/json and no body at all (no Content-Length)', async (line) => {
      const request = Buffer.from(`${line} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n`);
      const { responses } = await sendRaw(request, { port: sut.server.port });
      expect(responses[0]?.status).toBe(400);
      expect(JSON.parse(responses[0]!.body.toString())).toMatchObject({
        type: 'urn:user-records:problem:malformed-json',
        detail: 'The request has no body; a JSON value is required.',
      });
    });
  });

  test.each(['/users/%', '/users/%zz', '/api/users/1%', '/nope%'])('a path with broken escapes, %s, gets a problem with a valid instance', async (path) => {
    // httpClient checks the problem against the contract, whose instance is a uri-reference.
    const res = await sut.api.get(path);
    expect([400, 404]).toContain(res.status);
    expect(res.body.instance).toBe(path.replace(/%(?![0-9A-Fa-f]{2})/g, '%25'));
  });

  describe('404: unknown routes', () => {
    test.each(['/nope', '/api/nope', '/users/1/extra', '/users/', '/USERS', '/api/users/1/', '/api'])('%s', async (path) => {
      const res = await sut.api.get(path);
      expect(res.status).toBe(404);
      expect(res.body.detail).toBe(`No route matches GET ${path}. The API reference is at /docs.`);
    });
  });

  describe('an answer repeats the request only in part: a long request cannot make a long answer', () => {
    const long = 'a'.repeat(12_000);
    const cut = `${'a'.repeat(64)}…`;

    test('a long unknown path: 64 characters in the detail, 1,024 in the instance', async () => {
      const res = await sut.api.get(`/${long}`);
      expect(res.status).toBe(404);
      expect(res.body.detail).toBe(`No route matches GET /${'a'.repeat(63)}…. The API reference is at /docs.`);
      expect(res.body.instance).toBe(`/${'a'.repeat(1023)}`);
      expect(res.text.length).toBeLessThan(1500);
    });

    test('an instance is never cut inside an escape', async () => {
      const res = await sut.api.get(`/users/${'%41'.repeat(400)}`);
      expect(res.status).toBe(400);
      expect(res.body.instance).toMatch(/^\/users\/(%41)+$/);
      expect(res.body.instance.length).toBeLessThanOrEqual(1024);
    });

    test('a long media type', async () => {
      const res = await sut.api.request('POST', '/users', { raw: JSON.stringify(buildUserInput()), headers: { 'content-type': `text/${long}` } });
      expect(res.status).toBe(415);
      expect(res.body.detail).toBe(`The request body must be application/json (got text/${'a'.repeat(59)}…).`);
    });

    test('a long Content-Encoding', async () => {
      const res = await sut.api.request('POST', '/users', { raw: JSON.stringify(buildUserInput()), headers: { ...JSON_TYPE, 'content-encoding': long } });
      expect(res.status).toBe(415);
      expect(res.body.detail).toBe(`Content-Encoding ${cut} is not supported; send the body uncompressed.`);
    });

    test('a long unknown member: its pointer names it in part, whole characters only', async () => {
      const name = `${'é'.repeat(63)}😀${'a'.repeat(3000)}`; // under this server's 4 KiB body limit
      const raw = JSON.stringify({ ...buildUserInput(), [name]: 1 });
      const res = await sut.api.request('POST', '/users', { raw, headers: JSON_TYPE });
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([{ path: `/${'é'.repeat(63)}😀…`, message: 'is not allowed' }]);
      expect(res.text.length).toBeLessThan(1000);
    });

    test('an unknown member named with / and ~ is a JSON Pointer that finds it (RFC 6901)', async () => {
      const raw = JSON.stringify({ ...buildUserInput(), 'a/b~c': 1 });
      const res = await sut.api.request('POST', '/users', { raw, headers: JSON_TYPE });
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([{ path: '/a~1b~0c', message: 'is not allowed' }]);
    });

    test('a long Expect', async () => {
      const request = Buffer.from(`GET /users HTTP/1.1\r\nHost: localhost\r\nExpect: ${long}\r\nConnection: close\r\n\r\n`);
      const { responses } = await sendRaw(request, { port: sut.server.port });
      expect(responses[0]?.status).toBe(417);
      expect(JSON.parse(responses[0]!.body.toString())).toEqual({
        type: 'urn:user-records:problem:expectation-failed',
        title: 'Expectation Failed',
        status: 417,
        detail: `Expect: ${cut} cannot be met.`,
      });
    });
  });

  describe('405: a method the path does not have', () => {
    test.each([
      ['PATCH', '/users', 'GET, HEAD, OPTIONS, POST'],
      ['POST', '/users/1', 'DELETE, GET, HEAD, OPTIONS, PATCH, PUT'],
      ['DELETE', '/users', 'GET, HEAD, OPTIONS, POST'],
      ['PUT', '/api/users', 'GET, HEAD, OPTIONS, POST'],
      ['POST', '/protected-resource', 'GET, HEAD, OPTIONS'],
    ])('%s %s', async (method, path, allow) => {
      const res = await sut.api.request(method, path);
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe(allow);
      expect(res.body.status).toBe(405);
    });

    test('OPTIONS answers 204 with Allow', async () => {
      const res = await sut.api.request('OPTIONS', '/api/users/1', { unchecked: true });
      expect(res.status).toBe(204);
      expect(res.headers.get('allow')).toBe('DELETE, GET, HEAD, OPTIONS, PATCH, PUT');
    });

    test('HEAD is answered like GET, without a body', async () => {
      const res = await sut.api.request('HEAD', '/users/1', { unchecked: true });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.text).toBe('');
    });
  });

  describe('413: a body over the limit', () => {
    test('is refused before it is parsed, and nothing is stored', async () => {
      const before = await storedCount(sut.server);
      const res = await sut.api.post('/users', buildUserInput({ lastName: 'x'.repeat(5000) }));
      expect(res.status).toBe(413);
      expect(res.body.type).toBe('urn:user-records:problem:payload-too-large');
      expect(await storedCount(sut.server)).toBe(before);
    });
  });

  describe('415: a body that is not application/json', () => {
    test.each([
      ['no Content-Type', {}],
      ['text/plain', { 'content-type': 'text/plain' }],
      ['a form', { 'content-type': 'application/x-www-form-urlencoded' }],
    ])('%s', async (_case, headers) => {
      const raw = JSON.stringify(buildUserInput());
      const res = await sut.api.request('POST', '/users', { raw, headers });
      expect(res.status).toBe(415);
      expect(res.body.type).toBe('urn:user-records:problem:unsupported-media-type');
    });

    test('a compressed body is refused before it is read', async () => {
      const res = await sut.api.request('POST', '/users', { raw: JSON.stringify(buildUserInput()), headers: { ...JSON_TYPE, 'content-encoding': 'gzip' } });
      expect(res.status).toBe(415);
      expect(res.body.detail).toBe('Content-Encoding gzip is not supported; send the body uncompressed.');
    });

    test.each(['/healthz', '/users', '/users/1'])('a Content-Encoding on GET %s, which has no body to decode, is no reason to refuse it', async (path) => {
      const res = await sut.api.request('GET', path, { headers: { 'content-encoding': 'gzip' } });
      expect(res.status).toBe(200);
    });

    test('application/json with a charset parameter is accepted', async () => {
      const res = await sut.api.post('/users', buildUserInput(), { headers: { 'content-type': 'application/json; charset=utf-8' } });
      expect(res.status).toBe(201);
    });
  });

  describe('422: JSON that breaks the schema', () => {
    test('a __proto__ member is refused (422) and pollutes nothing', async () => {
      const before = await storedCount(sut.server);
      const raw = '{"firstName":"A","lastName":"B","email":"a@example.com","__proto__":{"polluted":true}}';
      const res = await sut.api.request('POST', '/users', { raw, headers: JSON_TYPE });
      expect(res.status).toBe(422);
      expect(res.body.detail).toMatch(/__proto__/);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(await storedCount(sut.server)).toBe(before);
    });

    test.each([
      ['the JSON string ""', '""'],
      ['null', 'null'],
      ['a number', '0'],
    ])('%s as the body is well-formed JSON of the wrong type', async (_case, raw) => {
      const res = await sut.api.request('POST', '/users', { raw, headers: JSON_TYPE });
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([{ path: '', message: 'must be object' }]);
    });

    test.each([
      ['a NUL character', 'Ada\\u0000Lovelace'],
      ['a control character', 'Ada\\u0007'],
      ['DEL', 'Ada\\u007f'],
      ['a C1 control character (NEL)', 'Ada\\u0085'],
      ['a C1 control character (CSI)', 'Ada\\u009b'],
    ])('a name with %s is refused rather than stored altered', async (_case, firstName) => {
      const raw = `{"firstName":"${firstName}","lastName":"L","email":"a@example.com"}`;
      const before = await storedCount(sut.server);
      const res = await sut.api.request('POST', '/users', { raw, headers: JSON_TYPE });
      expect(res.status).toBe(422);
      expect(res.body.errors[0]).toEqual({ path: '/firstName', message: 'must contain a character other than white space, and no control characters' });
      const demo = await sut.api.request('POST', '/api/users', { raw: `{"name":"${firstName}","email":"a@example.com"}`, headers: JSON_TYPE });
      expect(demo.status).toBe(422);
      expect(await storedCount(sut.server)).toBe(before);
    });

    test.each([
      ['a lone high half', 'Ada\\ud800', 'Ada\uFFFD', 'Ada\\ud83d\\ude00'],
      ['a lone low half', '\\udc00Ada', '\uFFFDAda', '\\ud83d\\ude00Ada'],
      ['a high half at the end', 'Ada\\udbff', 'Ada\uFFFD', 'Ada \\ud83d\\ude00'],
    ])(
      'a string with %s of a surrogate pair is no Unicode text: 422 where it is, while the whole pair is a character',
      async (_case, broken, shown, paired) => {
        const before = await storedCount(sut.server);
        for (const [path, raw, field] of [
          ['/users', `{"firstName":"${broken}","lastName":"L","email":"a@example.com"}`, '/firstName'],
          ['/users', `{"firstName":"Ada","lastName":"${broken}","email":"a@example.com"}`, '/lastName'],
          ['/api/users', `{"name":"${broken}","email":"a@example.com"}`, '/name'],
          ['/users', `{"firstName":"Ada","lastName":"L","email":"a@example.com","${broken}":1}`, undefined],
        ] as const) {
          const res = await sut.api.request('POST', path, { raw, headers: JSON_TYPE });
          expect(res.status).toBe(422);
          if (field) expect(res.body.errors).toEqual([{ path: field, message: 'must be Unicode text: it holds half of a surrogate pair alone' }]);
          // An unknown member, whose name the answer shows as Unicode text.
          else expect(res.body.errors).toEqual([{ path: `/${shown}`, message: 'is not allowed' }]);
        }
        expect(await storedCount(sut.server)).toBe(before);
        const emoji = await sut.api.request('POST', '/users', { raw: `{"firstName":"${paired}","lastName":"L","email":"a@example.com"}`, headers: JSON_TYPE });
        expect(emoji.status).toBe(201);
      },
    );

    test('names in any script are stored as sent', async () => {
      const input = { firstName: 'Zoë', lastName: 'Ångström-李 😀', email: 'zoe@example.com' };
      const res = await sut.api.post('/users', input);
      expect(res.status).toBe(201);
      expect((await sut.api.get(`/users/${res.body.id}`)).body).toMatchObject(input);
    });

    test('lists every failure at once', async () => {
      const res = await sut.api.post('/users', { firstName: 7, email: 'x', extra: true });
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual(
        expect.arrayContaining([
          { path: '/lastName', message: 'is required' },
          { path: '/extra', message: 'is not allowed' },
          { path: '/firstName', message: 'must be string' },
          { path: '/email', message: 'must be an e-mail address such as ann@example.com (a domain with a dot; no quotes or IP addresses)' },
        ]),
      );
    });
  });

  describe('BASE_PATH', () => {
    test('mounts every path under the prefix, Location included', () =>
      withTestServer({ dialect, env: { BASE_PATH: '/v1' } }, async (mounted, client) => {
        expect(mounted.url).toMatch(/\/v1$/);
        expect((await client.get('/users/1')).status).toBe(200);
        expect((await client.get('/api/users/1')).status).toBe(200);
        const created = await client.post('/api/users', { name: 'Base Path', email: 'bp@example.com' });
        expect(created.headers.get('location')).toBe(`/v1/api/users/${created.body.id}`);
        const outside = await fetch(new URL('/users/1', mounted.url));
        expect(outside.status).toBe(404);
      }));
  });

  describe('503: the store is unavailable', () => {
    test('is reported as problem+json, not as a crash', () =>
      withTestServer({ dialect }, async (broken, client) => {
        await broken.database.close();
        for (const res of [await client.get('/users/1'), await client.get('/api/users'), await client.post('/users', buildUserInput())]) {
          expect(res.status).toBe(503);
          expect(res.body).toMatchObject({ type: 'urn:user-records:problem:store-unavailable', status: 503 });
        }
      }));
  });
});

// Answers written before any operation is chosen, and a failure nobody foresaw: each exactly as the contract's
// shared examples show it (MalformedHttp, HeadersTooLarge, *InternalError).
describe('answers every operation may give', () => {
  const sut = useTestServer({ dialect: 'sqlite' });
  const problemOf = (body: Buffer) => JSON.parse(body.toString());

  test('400: a request that is not HTTP/1.1 names no instance', async () => {
    const { responses } = await sendRaw(Buffer.from('GET /healthz HTTP/1.1\r\nHost: localhost\r\nNo colon here\r\n\r\n'), { port: sut.server.port });
    expect(responses[0]?.status).toBe(400);
    expect(problemOf(responses[0]!.body)).toEqual({
      type: 'urn:user-records:problem:bad-request',
      title: 'Bad Request',
      status: 400,
      detail: 'The request is not valid HTTP/1.1.',
    });
  });

  test('431: a request head over 16 KiB names no instance', async () => {
    const { responses } = await sendRaw(Buffer.from(`GET /users HTTP/1.1\r\nHost: localhost\r\nX-Filler: ${'a'.repeat(17_000)}\r\n\r\n`), {
      port: sut.server.port,
    });
    expect(responses[0]?.status).toBe(431);
    expect(problemOf(responses[0]!.body)).toEqual({
      type: 'urn:user-records:problem:headers-too-large',
      title: 'Request Header Fields Too Large',
      status: 431,
      detail: 'The request head is larger than 16384 bytes.',
    });
  });

  test('500: a store that answers with an error nobody foresaw (its table gone) gets a problem that says nothing of it', async () => {
    const other = new SqliteDatabase(sut.server.store.sqliteFile!);
    try {
      other.exec('ALTER TABLE users RENAME TO users_elsewhere');
    } finally {
      other.close();
    }
    const res = await sut.api.get('/users/2');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      type: 'urn:user-records:problem:internal-error',
      title: 'Internal Server Error',
      status: 500,
      detail: 'The server could not complete the request.',
      instance: '/users/2',
    });
  });
});

// A store that does not have the columns the migrations made (one renamed by hand, a botched restore) must
// fail the request, never answer a user without a member the contract requires.
describeEachDialect((dialect) => {
  test('a store whose email column was renamed under the server: reading a user is a 500, not a user without an email', () =>
    withTestServer({ dialect }, async (server, api) => {
      const rename = 'ALTER TABLE users RENAME COLUMN email TO mail';
      if (server.store.sqliteFile) {
        const other = new SqliteDatabase(server.store.sqliteFile);
        try {
          other.exec(rename);
        } finally {
          other.close();
        }
      } else {
        await postgresQuery(rename, [], server.store.url);
      }
      // The client checks the answer against the contract: a 200 without email would throw here.
      const res = await api.get('/users/2');
      expect(res.status).toBe(500);
      expect(res.body.type).toBe('urn:user-records:problem:internal-error');
    }));
});
