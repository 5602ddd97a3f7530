import dns from 'node:dns';
import {
  checkCallbackUrl,
  describeReason,
  checkCallbackUrlResolved,
  DestinationRefused,
  guardedLookup,
  isBlockedAddress,
  parseCallbackUrl,
  resolveCallbackUrl,
} from './destination-guard.js';
import { SPECIAL_RANGES } from './special-addresses.js';

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
    ['10/8', 'https://10.0.0.1/cb', 'points at a private address (10.0.0.0/8, RFC 1918)'],
    [
      'cloud metadata',
      'https://169.254.169.254/latest/meta-data',
      'points at a link-local address (169.254.0.0/16, RFC 3927)',
    ],
    ['loopback', 'https://127.0.0.1/cb', 'points at a loopback address (127.0.0.0/8, RFC 1122)'],
    ['loopback, decimal form', 'https://2130706433/cb', 'points at a loopback address (127.0.0.0/8, RFC 1122)'],
    ['loopback, hex form', 'https://0x7f000001/cb', 'points at a loopback address (127.0.0.0/8, RFC 1122)'],
    ['loopback, octal form', 'https://0177.0.0.1/cb', 'points at a loopback address (127.0.0.0/8, RFC 1122)'],
    ['loopback, short form', 'https://127.1/cb', 'points at a loopback address (127.0.0.0/8, RFC 1122)'],
    ['IPv6 loopback', 'https://[::1]/cb', 'points at a loopback address (::1/128, RFC 4291)'],
    [
      'IPv4-mapped loopback',
      'https://[::ffff:127.0.0.1]/cb',
      'points at a loopback address (127.0.0.0/8, RFC 1122, via IPv4-mapped, RFC 4291)',
    ],
    [
      'IPv4-mapped metadata, hex',
      'https://[::ffff:a9fe:a9fe]/cb',
      'points at a link-local address (169.254.0.0/16, RFC 3927, via IPv4-mapped, RFC 4291)',
    ],
    ['IPv6 link-local', 'https://[fe80::1]/cb', 'points at a link-local address (fe80::/10, RFC 4291)'],
    ['IPv6 unique local', 'https://[fd00::1]/cb', 'points at a private address (fc00::/7, RFC 4193)'],
    ['CGNAT', 'https://100.64.0.1/cb', 'points at a CGNAT address (100.64.0.0/10, RFC 6598)'],
    ['multicast', 'https://224.0.0.1/cb', 'points at a multicast address (224.0.0.0/4, RFC 5771)'],
    ['reserved', 'https://240.0.0.1/cb', 'points at a reserved address (240.0.0.0/4, RFC 1112)'],
    ['unspecified', 'https://0.0.0.0/cb', 'points at an unspecified address (0.0.0.0/32, RFC 1122)'],
    ['benchmarking', 'https://198.18.0.1/cb', 'points at a benchmarking address (198.18.0.0/15, RFC 2544)'],
    ['172.16/12', 'https://172.20.1.1/cb', 'points at a private address (172.16.0.0/12, RFC 1918)'],
    ['192.168/16', 'https://192.168.1.1/cb', 'points at a private address (192.168.0.0/16, RFC 1918)'],
    ['localhost', 'https://localhost/cb', 'points at a local host name'],
    ['sub.localhost', 'https://foo.localhost/cb', 'points at a local host name'],
    ['.internal', 'https://metadata.google.internal/cb', 'points at a local host name'],
    ['home.arpa', 'https://printer.home.arpa/cb', 'points at a local host name'],
    [
      'leading space',
      ' https://partner.example.com/cb',
      'must not contain surrounding whitespace, backslashes or control characters',
    ],
    [
      'trailing newline',
      'https://partner.example.com/cb\n',
      'must not contain surrounding whitespace, backslashes or control characters',
    ],
    [
      'backslash',
      'https://partner.example.com\\@10.0.0.1/cb',
      'must not contain surrounding whitespace, backslashes or control characters',
    ],
    [
      'tab inside',
      'https://partner.exa\tmple.com/cb',
      'must not contain surrounding whitespace, backslashes or control characters',
    ],
    [
      'C1 control',
      'https://partner.example.com/c\u0085b',
      'must not contain surrounding whitespace, backslashes or control characters',
    ],
    ['port 25', 'https://partner.example.com:25/cb', 'must not use port 25 (below 1024, only 80 and 443 are allowed)'],
    ['port 22', 'https://93.184.215.14:22/cb', 'must not use port 22 (below 1024, only 80 and 443 are allowed)'],
    ['port 80 on https', 'https://partner.example.com:80/cb', null],
    ['port 1024', 'https://partner.example.com:1024/cb', null],
    ['NAT64 of a public address', 'https://[64:ff9b::5db8:d70e]/cb', null],
    [
      'NAT64 of metadata',
      'https://[64:ff9b::169.254.169.254]/cb',
      'points at a link-local address (169.254.0.0/16, RFC 3927, via NAT64, RFC 6052)',
    ],
    ['6to4', 'https://[2002:5db8:d70e::1]/cb', 'points at a 6to4 address (2002::/16, RFC 3056)'],
    ['Teredo', 'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/cb', 'points at a Teredo address (2001::/32, RFC 4380)'],
    [
      'IPv4-compatible (deprecated)',
      'https://[::5db8:d70e]/cb',
      'points at a reserved address (::/0 outside 2000::/3, RFC 4291)',
    ],
  ])('%s: %s → %p', (_, url, expected) => {
    expect(checkCallbackUrl(url, STRICT)).toBe(expected);
  });

  it('accepts http only with CALLBACK_ALLOW_HTTP', () => {
    expect(checkCallbackUrl('http://partner.example.com/cb', HTTP)).toBeNull();
    expect(checkCallbackUrl('ftp://partner.example.com/cb', HTTP)).toBe('must be an absolute http or https URL');
  });

  it.each([
    ['https://10.0.0.1/cb'],
    ['http://127.0.0.1:3000/cb'],
    ['https://[::1]/cb'],
    ['https://localhost/cb'],
    ['http://169.254.169.254/'],
  ])('accepts private %s with CALLBACK_ALLOW_PRIVATE_TARGETS', (url) => {
    expect(checkCallbackUrl(url, OPEN)).toBeNull();
  });

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
    ['255.255.255.255', 'limited broadcast'],
    ['8.8.8.8', null],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:8.8.8.8', null],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['64:ff9b::808:808', null],
    ['64:ff9b:1::808:808', 'local-use NAT64'],
    ['2002:0a00:0001::1', '6to4'],
    ['2002:0808:0808::1', '6to4'],
    ['2001::1', 'Teredo'],
    ['2001:4860:4860::8888', null],
    ['2001:1::1', 'PCP anycast'],
    ['2001:1ff::1', 'IETF protocol assignments'],
    ['2001:200::1', null],
    ['3fff::1', 'documentation'],
    ['5f00::1', 'SRv6 SID'],
    ['4000::1', 'reserved'],
    ['192.0.0.9', 'PCP anycast'],
    ['192.0.0.171', 'NAT64/DNS64 discovery'],
    ['192.0.1.1', null],
    ['192.88.99.2', '6a44 relay anycast'],
    ['192.175.48.1', 'AS112'],
    ['0.1.2.3', 'this-network'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['2606:4700:4700::1111', null],
  ])('%s → %p', (ip, reason) => {
    expect(isBlockedAddress(ip)?.name ?? null).toBe(reason);
  });
});

describe('checkCallbackUrlResolved', () => {
  const resolvesTo =
    (...addresses: string[]) =>
    () =>
      Promise.resolve(addresses);
  it('accepts a name resolving to public addresses only', async () => {
    expect(
      await checkCallbackUrlResolved(
        'https://partner.example/cb',
        STRICT,
        resolvesTo('93.184.215.14', '2606:2800:220:1::1'),
      ),
    ).toBeNull();
  });
  it('refuses a name resolving to a private address', async () => {
    expect(await checkCallbackUrlResolved('https://partner.example/cb', STRICT, resolvesTo('10.0.0.1'))).toBe(
      'resolves to a private address (10.0.0.0/8, RFC 1918) (10.0.0.1)',
    );
  });
  it('refuses a name when any of its addresses is private', async () => {
    expect(
      await checkCallbackUrlResolved(
        'https://partner.example/cb',
        STRICT,
        resolvesTo('93.184.215.14', '169.254.169.254'),
      ),
    ).toBe('resolves to a link-local address (169.254.0.0/16, RFC 3927) (169.254.169.254)');
  });
  it('refuses a name that does not resolve', async () => {
    expect(await checkCallbackUrlResolved('https://partner.example/cb', STRICT, resolvesTo())).toBe(
      'host partner.example does not resolve',
    );
    const failing = () => Promise.reject(new Error('ENOTFOUND'));
    expect(await checkCallbackUrlResolved('https://partner.example/cb', STRICT, failing)).toBe(
      'host partner.example does not resolve',
    );
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
  const fake =
    (...addresses: string[]) =>
    (_host: string, _o: dns.LookupOptions, cb: Cb) =>
      cb(
        null,
        addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
      );
  const call = (lookup: ReturnType<typeof guardedLookup>, options: dns.LookupOptions) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }>((resolve) =>
      lookup('partner.example', options, (err, address, family) => resolve({ err, address, family })),
    );

  it.each([['10.0.0.1'], ['169.254.169.254'], ['::1'], ['::ffff:127.0.0.1']])(
    'refuses %s before any connection',
    async (ip) => {
      for (const options of [{}, { all: true }]) {
        const { err } = await call(guardedLookup(STRICT, fake('93.184.215.14', ip)), options);
        expect(err).toBeInstanceOf(DestinationRefused);
        expect(err?.code).toBe('EDESTINATIONREFUSED');
        expect(err?.message).toBe(
          `destination refused: partner.example resolves to ${ip}, ${describeReason(isBlockedAddress(ip)!)}`,
        );
      }
    },
  );

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
    expect(await call(guardedLookup(OPEN, fake('127.0.0.1')), {})).toEqual({
      err: null,
      address: '127.0.0.1',
      family: 4,
    });
  });
});

/** Every registry entry as data: its first and last address are refused, with the entry's own name. */
function bounds(prefix: string): [string, string] {
  const [ip, len] = prefix.split('/');
  if (!ip.includes(':')) {
    const n = ip.split('.').reduce((a, p) => a * 256 + Number(p), 0);
    const size = 2 ** (32 - Number(len));
    const dotted = (x: number) => [24, 16, 8, 0].map((s) => Math.floor(x / 2 ** s) % 256).join('.');
    return [dotted(n), dotted(n + size - 1)];
  }
  const url = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  const [head, tail = ''] = url.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = url.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
  const n = groups.reduce((a, g) => (a << 16n) + BigInt(parseInt(g, 16)), 0n);
  const last = n | ((1n << BigInt(128 - Number(len))) - 1n);
  const hex = (x: bigint) => x.toString(16).padStart(32, '0').match(/.{4}/g)!.join(':');
  return [hex(n), hex(last)];
}

describe('the IANA special-purpose registries, entry by entry', () => {
  const rows = [...SPECIAL_RANGES.ipv4, ...SPECIAL_RANGES.ipv6].flatMap(([prefix, name]) =>
    bounds(prefix).map((ip) => [prefix, ip, name] as const),
  );
  it.each(rows)('%s: %s is refused', (_prefix, ip) => {
    expect(isBlockedAddress(ip)).not.toBeNull();
  });
  // A more specific entry names the reason, so only the entries no other contains are checked by name.
  it.each(
    rows.filter(
      ([prefix]) =>
        !['0.0.0.0/8', '192.0.0.0/24', '192.88.99.0/24', '240.0.0.0/4', '2001::/23', '2001::/32'].includes(prefix),
    ),
  )('%s: %s is a %s address', (_prefix, ip, name) => {
    expect(isBlockedAddress(ip)?.name).toBe(name);
  });
  it.each(SPECIAL_RANGES.ipv4.map(([prefix]) => prefix))(
    'IPv4-mapped and NAT64 forms of %s are refused too',
    (prefix) => {
      const [first] = bounds(prefix);
      expect(isBlockedAddress(`::ffff:${first}`)).not.toBeNull();
      expect(isBlockedAddress(`64:ff9b::${first}`)).not.toBeNull();
    },
  );
  it.each([
    ['1.1.1.1'],
    ['93.184.215.14'],
    ['::ffff:1.1.1.1'],
    ['64:ff9b::1.1.1.1'],
    ['2606:4700:4700::1111'],
    ['2a00:1450:4001:80b::200e'],
  ])('%s is public', (ip) => {
    expect(isBlockedAddress(ip)).toBeNull();
  });
});

describe('normalised form', () => {
  it.each([
    ['https://Partner.EXAMPLE.com/cb', 'https://partner.example.com/cb'],
    ['https://partner.example.com', 'https://partner.example.com/'],
    ['https://partner.example.com:443/a/../b', 'https://partner.example.com/b'],
    ['https://partner.example.com/a b?x=é', 'https://partner.example.com/a%20b?x=%C3%A9'],
    ['https://bücher.example/cb', 'https://xn--bcher-kva.example/cb'],
    ['https://93.184.215.14./cb', 'https://93.184.215.14/cb'],
  ])('%s is stored as %s', async (raw, stored) => {
    expect(parseCallbackUrl(raw, STRICT).url?.href).toBe(stored);
    expect(await resolveCallbackUrl(raw, STRICT, () => Promise.resolve(['93.184.215.14']))).toEqual({ url: stored });
  });
  it('refuses a URL whose serialisation grows past 2048 characters', () => {
    expect(checkCallbackUrl(`https://partner.example.com/${' '.repeat(1000)}x`, STRICT)).toBe(
      'must be at most 2048 characters',
    );
  });
  it('lifts the port rule with CALLBACK_ALLOW_PRIVATE_TARGETS (development and tests)', () => {
    expect(checkCallbackUrl('http://127.0.0.1:9/cb', OPEN)).toBeNull();
  });
});
