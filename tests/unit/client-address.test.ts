import { addressBlock, clientAddress, normaliseAddress } from '../../server/http/limits/client-address.js';

describe('normaliseAddress', () => {
  test.each([
    ['192.0.2.7', '192.0.2.7'],
    ['192.0.2.7:4711', '192.0.2.7'],
    ['::ffff:192.0.2.7', '192.0.2.7'],
    ['::FFFF:c000:0207', '192.0.2.7'],
    ['[::ffff:192.0.2.7]:443', '192.0.2.7'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:DB8::1', '2001:db8:0:0::/64'],
    ['2001:0db8:0000:0000:ffff:0000:0000:0002', '2001:db8:0:0::/64'],
    ['[2001:db8::abcd]:8080', '2001:db8:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['::1', '0:0:0:0::/64'],
    ['::', '0:0:0:0::/64'],
    [' 198.51.100.1 ', '198.51.100.1'],
  ])('%s is counted as %s', (raw, key) => {
    expect(normaliseAddress(raw)).toBe(key);
  });

  test.each(['', 'unknown', 'evil.example', '1.2.3', '01.2.3.4', '1.2.3.4.5', 'x'.repeat(12_000), `2001:db8::1${' '.repeat(100)}`])(
    '%j is not an address',
    (raw) => {
      expect(normaliseAddress(raw)).toBeUndefined();
    },
  );
});

describe('clientAddress', () => {
  const proxy = '10.0.0.1';
  test('without trusted hops the socket decides, whatever the client wrote', () => {
    expect(clientAddress('::ffff:203.0.113.9', '198.51.100.1', 0)).toBe('203.0.113.9');
  });
  test('with one hop, the entry the proxy appended, never one the client wrote', () => {
    expect(clientAddress(proxy, '198.51.100.1, 203.0.113.9', 1)).toBe('203.0.113.9');
    expect(clientAddress(proxy, '203.0.113.9', 1)).toBe('203.0.113.9');
  });
  test('with two hops, the entry the farther proxy appended', () => {
    expect(clientAddress(proxy, 'spoofed, 203.0.113.9, 10.0.0.2', 2)).toBe('203.0.113.9');
  });
  test('without the header, or with garbage where an address belongs, the socket decides', () => {
    expect(clientAddress(proxy, undefined, 1)).toBe(proxy);
    expect(clientAddress(proxy, '203.0.113.9, not-an-address', 1)).toBe(proxy);
    expect(clientAddress(undefined, undefined, 0)).toBe('unknown');
  });
});

describe('addressBlock', () => {
  test.each([
    ['192.0.2.7', '192.0.2.0/24'],
    ['192.0.2.200', '192.0.2.0/24'],
    ['2001:db8:0:0::/64', '2001:db8:0:0::/64'],
    ['unknown', 'unknown'],
  ])('%s weighs in block %s', (client, block) => {
    expect(addressBlock(client)).toBe(block);
  });
});
