import { createBasicAuthenticator, parseBasicAuthorization } from '../../server/http/basic-auth.js';

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

describe('createBasicAuthenticator', () => {
  const verify = createBasicAuthenticator({ username: 'admin', password: 'pw' });

  test('accepts exactly the configured pair', () => {
    expect(verify(`Basic ${b64('admin:pw')}`)).toEqual({ username: 'admin' });
    expect(verify(`Basic ${b64('admin:pw ')}`)).toBeUndefined();
    expect(verify(`Basic ${b64('Admin:pw')}`)).toBeUndefined();
    expect(verify(`Basic ${b64('admin:p')}`)).toBeUndefined();
    expect(verify(undefined)).toBeUndefined();
  });
});
