import { hashPassword, parsePasswordHash, verifyPassword } from '../../server/password-hash.js';
import { createBasicAuthenticator } from '../../server/http/auth/basic-auth.js';
import { parseBasicAuthorization } from '../../server/http/auth/basic-credentials.js';

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

describe('parseBasicAuthorization', () => {
  test.each([
    [`Basic ${b64('admin:pw')}`, { username: 'admin', password: 'pw' }],
    [`BASIC ${b64('admin:pw')}`, { username: 'admin', password: 'pw' }],
    [`Basic ${b64('admin:pw:with:colons')}`, { username: 'admin', password: 'pw:with:colons' }],
    [`Basic ${b64('admin:')}`, { username: 'admin', password: '' }],
    [`Basic ${b64('zoë:pässwörd')}`, { username: 'zoë', password: 'pässwörd' }],
  ])('%s', (header, expected) => {
    expect(parseBasicAuthorization(header)).toEqual(expected);
  });

  test.each([undefined, '', 'Basic', 'Basic ', 'Bearer abc', `Basic ${b64('no-colon')}`, 'Basic ***', 'Basic a', `Basic${b64('a:b')}`])(
    '%j is not credentials',
    (header) => {
      expect(parseBasicAuthorization(header)).toBeUndefined();
    },
  );
});

describe.each([
  ['a plain password', async () => ({ kind: 'password' as const, password: 'pw' })],
  [
    'an scrypt hash',
    async () => ({ kind: 'hash' as const, hash: parsePasswordHash(await hashPassword('pw', { cost: 1024, blockSize: 8, parallelization: 1 }))! }),
  ],
])('createBasicAuthenticator with %s', (_case, secret) => {
  test('accepts exactly the configured pair', async () => {
    const check = createBasicAuthenticator({ username: 'admin', secret: await secret() });
    const verify = (header: string) => check(parseBasicAuthorization(header)!);
    expect(await verify(`Basic ${b64('admin:pw')}`)).toEqual({ principal: { username: 'admin' } });
    expect(await verify(`Basic ${b64('admin:pw ')}`)).toEqual({ failedUsername: 'admin' });
    expect(await verify(`Basic ${b64('Admin:pw')}`)).toEqual({ failedUsername: 'Admin' });
    expect(await verify(`Basic ${b64('admin:p')}`)).toEqual({ failedUsername: 'admin' });
  });
});

describe('password hashes', () => {
  test('a hash round-trips and verifies only its password', async () => {
    const text = await hashPassword('correct horse', { cost: 1024, blockSize: 8, parallelization: 1 });
    expect(text).toMatch(/^scrypt\$1024\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    const hash = parsePasswordHash(text)!;
    expect(await verifyPassword('correct horse', hash)).toBe(true);
    expect(await verifyPassword('correct horse ', hash)).toBe(false);
    expect(await hashPassword('correct horse', { cost: 1024, blockSize: 8, parallelization: 1 })).not.toBe(text);
  });

  test.each([
    'plain-text',
    'scrypt$1000$8$1$c2FsdHNhbHRzYWx0c2FsdA==$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g=',
    'scrypt$16384$8$1$c2FsdA==$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g=',
    'bcrypt$2b$10$abcdefghijklmnopqrstuv',
  ])('%j is not a usable hash', (text) => {
    expect(parsePasswordHash(text)).toBeUndefined();
  });
});
