import dns from 'node:dns';
import { checkCallbackUrl, describeReason, checkCallbackUrlResolved, DestinationRefused, guardedLookup, isBlockedAddress } from './destination-guard.js';

const STRICT = { allowHttp: false, allowPrivate: false };
const HTTP = { allowHttp: true, allowPrivate: false };
const OPEN = { allowHttp: true, allowPrivate: true };

describe('checkCallbackUrl (registration, production defaults)', () => {
  it.each<[string, unknown, string | null]>([
    ['public https', 'https://partner.example.com/hooks/funding', null],
    ['public https with port and query', 'https://partner.example.com:8443/cb?x=1', null],
    ['public IPv4 literal', 'https://93.184.215.14/cb', null],
    ['public IPv6 literal', 'https://[2606:2800:220:1:248:1893:25c8:1946]/cb', null],
    ['fragment (harmless)', 'https://partner.example.com/cb#frag', null],
    ['plain http', 'http://partner.example.com/cb', 'must be an absolute https URL'],
    ['ftp', 'ftp://partner.example.com/cb', 'must be an absolute https URL'],
    ['relative', '/hooks/funding', 'must be an absolute https URL'],
    ['not a string', 42, 'must be a URL string'],
    ['user info', 'https://user:pw@partner.example.com/cb', 'must not contain user information'],
    ['user name only', 'https://user@partner.example.com/cb', 'must not contain user information'],
    ['2049 characters', `https://partner.example.com/${'a'.repeat(2049 - 28)}`, 'must be at most 2048 characters'],
    ['10/8', 'https://10.0.0.1/cb', 'points at a private address'],
    ['cloud metadata', 'https://169.254.169.254/latest/meta-data', 'points at a link-local address'],
    ['loopback', 'https://127.0.0.1/cb', 'points at a loopback address'],
    ['loopback, decimal form', 'https://2130706433/cb', 'points at a loopback address'],
    ['loopback, hex form', 'https://0x7f000001/cb', 'points at a loopback address'],
    ['loopback, octal form', 'https://0177.0.0.1/cb', 'points at a loopback address'],
    ['loopback, short form', 'https://127.1/cb', 'points at a loopback address'],
    ['IPv6 loopback', 'https://[::1]/cb', 'points at a loopback address'],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/cb', 'points at a loopback address'],
    ['IPv4-mapped metadata, hex', 'https://[::ffff:a9fe:a9fe]/cb', 'points at a link-local address'],
    ['IPv6 link-local', 'https://[fe80::1]/cb', 'points at a link-local address'],
    ['IPv6 unique local', 'https://[fd00::1]/cb', 'points at a private address'],
    ['CGNAT', 'https://100.64.0.1/cb', 'points at a CGNAT address'],
    ['multicast', 'https://224.0.0.1/cb', 'points at a multicast address'],
    ['reserved', 'https://240.0.0.1/cb', 'points at a reserved address'],
    ['unspecified', 'https://0.0.0.0/cb', 'points at an unspecified address'],
    ['benchmarking', 'https://198.18.0.1/cb', 'points at a reserved address'],
    ['172.16/12', 'https://172.20.1.1/cb', 'points at a private address'],
    ['192.168/16', 'https://192.168.1.1/cb', 'points at a private address'],
    ['localhost', 'https://localhost/cb', 'points at a local host name'],
    ['sub.localhost', 'https://foo.localhost/cb', 'points at a local host name'],
    ['.internal', 'https://metadata.google.internal/cb', 'points at a local host name'],
  ])('%s: %s → %p', (_, url, expected) => {
    expect(checkCallbackUrl(url, STRICT)).toBe(expected);
  });

  it('accepts http only with CALLBACK_ALLOW_HTTP', () => {
    expect(checkCallbackUrl('http://partner.example.com/cb', HTTP)).toBeNull();
    expect(checkCallbackUrl('ftp://partner.example.com/cb', HTTP)).toBe('must be an absolute http or https URL');
  });

  it.each([['https://10.0.0.1/cb'], ['http://127.0.0.1:3000/cb'], ['https://[::1]/cb'], ['https://localhost/cb'], ['http://169.254.169.254/']])(
    'accepts private %s with CALLBACK_ALLOW_PRIVATE_TARGETS',
    (url) => {
      expect(checkCallbackUrl(url, OPEN)).toBeNull();
    },
  );

  it('still refuses user info and oversize URLs with every flag set', () => {
    expect(checkCallbackUrl('http://a:b@127.0.0.1/', OPEN)).toBe('must not contain user information');
    expect(checkCallbackUrl(`http://127.0.0.1/${'a'.repeat(2048)}`, OPEN)).toBe('must be at most 2048 characters');
  });
});

describe('isBlockedAddress', () => {
  it.each<[string, string | null]>([
    ['172.15.255.255', null],
    ['172.16.0.0', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.0', null],
    ['100.63.255.255', null],
    ['100.64.0.0', 'CGNAT'],
    ['100.127.255.255', 'CGNAT'],
    ['100.128.0.0', null],
    ['169.253.255.255', null],
    ['255.255.255.255', 'reserved'],
    ['8.8.8.8', null],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:8.8.8.8', null],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['2002:0a00:0001::1', 'private'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['2606:4700:4700::1111', null],
  ])('%s → %p', (ip, reason) => {
    expect(isBlockedAddress(ip)).toBe(reason);
  });
});

describe('checkCallbackUrlResolved', () => {
  const resolvesTo = (...addresses: string[]) => async () => addresses;
  it('accepts a name resolving to public addresses only', async () => {
    expect(await checkCallbackUrlResolved('https://partner.example/cb', STRICT, resolvesTo('93.184.215.14', '2606:2800:220:1::1'))).toBeNull();
  });
  it('refuses a name resolving to a private address', async () => {
    expect(await checkCallbackUrlResolved('https://partner.example/cb', STRICT, resolvesTo('10.0.0.1'))).toBe('resolves to a private address (10.0.0.1)');
  });
  it('refuses a name when any of its addresses is private', async () => {
    expect(await checkCallbackUrlResolved('https://partner.example/cb', STRICT, resolvesTo('93.184.215.14', '169.254.169.254'))).toBe(
      'resolves to a link-local address (169.254.169.254)',
    );
  });
  it('refuses a name that does not resolve', async () => {
    expect(await checkCallbackUrlResolved('https://partner.example/cb', STRICT, resolvesTo())).toBe('host partner.example does not resolve');
    const failing = async () => {
      throw new Error('ENOTFOUND');
    };
    expect(await checkCallbackUrlResolved('https://partner.example/cb', STRICT, failing)).toBe('host partner.example does not resolve');
  });
  it('does not resolve IP literals or anything when private targets are allowed', async () => {
    const lookup = jest.fn(resolvesTo('10.0.0.1'));
    expect(await checkCallbackUrlResolved('https://93.184.215.14/cb', STRICT, lookup)).toBeNull();
    expect(await checkCallbackUrlResolved('https://partner.example/cb', OPEN, lookup)).toBeNull();
    expect(lookup).not.toHaveBeenCalled();
  });
});

describe('guardedLookup (connect time)', () => {
  type Cb = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;
  const fake = (...addresses: string[]) => (_host: string, _o: dns.LookupOptions, cb: Cb) => cb(null, addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  const call = (lookup: ReturnType<typeof guardedLookup>, options: dns.LookupOptions) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }>((resolve) =>
      lookup('partner.example', options, (err, address, family) => resolve({ err, address, family })),
    );

  it.each([['10.0.0.1'], ['169.254.169.254'], ['::1'], ['::ffff:127.0.0.1']])('refuses %s before any connection', async (ip) => {
    for (const options of [{}, { all: true }]) {
      const { err } = await call(guardedLookup(STRICT, fake('93.184.215.14', ip)), options);
      expect(err).toBeInstanceOf(DestinationRefused);
      expect(err?.code).toBe('EDESTINATIONREFUSED');
      expect(err?.message).toBe(`destination refused: partner.example resolves to ${ip}, ${describeReason(isBlockedAddress(ip)!)}`);
    }
  });

  it('passes public addresses through in both callback forms', async () => {
    const lookup = guardedLookup(STRICT, fake('93.184.215.14', '2606:2800:220:1::1'));
    expect(await call(lookup, {})).toEqual({ err: null, address: '93.184.215.14', family: 4 });
    expect(await call(lookup, { all: true })).toEqual({
      err: null,
      address: [
        { address: '93.184.215.14', family: 4 },
        { address: '2606:2800:220:1::1', family: 6 },
      ],
      family: undefined,
    });
  });

  it('lets private addresses through when they are allowed', async () => {
    expect(await call(guardedLookup(OPEN, fake('127.0.0.1')), {})).toEqual({ err: null, address: '127.0.0.1', family: 4 });
  });
});
