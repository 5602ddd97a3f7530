// Addresses no callback may reach: the IANA special-purpose address registries, whole, as data
// (iana-ipv4-special-registry and iana-ipv6-special-registry, as of 2025), plus the parts of the
// address spaces that are not global unicast (IPv4 multicast and class E, IPv6 outside 2000::/3).
// Even entries the registries mark "globally reachable" (AS112, AMT, anycast services) are
// refused: none of them is a partner's webhook receiver. Two IPv6 entries are translations of
// an IPv4 address carried in their last 32 bits (IPv4-mapped, and the NAT64 well-known prefix a
// DNS64 resolver answers with on IPv6-only hosts): those are judged by the IPv4 address inside.
// Where a range sits inside a larger one, the more specific is listed first (its name is the reason).
import { isIP } from 'node:net';

export interface SpecialRange {
  prefix: string;
  /** What it is, as "a <name> address" reads. */
  name: string;
  rfc: string;
}

const IPV4: [string, string, string][] = [
  ['0.0.0.0/32', 'unspecified', 'RFC 1122'],
  ['0.0.0.0/8', 'this-network', 'RFC 791'],
  ['10.0.0.0/8', 'private', 'RFC 1918'],
  ['100.64.0.0/10', 'CGNAT', 'RFC 6598'],
  ['127.0.0.0/8', 'loopback', 'RFC 1122'],
  ['169.254.0.0/16', 'link-local', 'RFC 3927'],
  ['172.16.0.0/12', 'private', 'RFC 1918'],
  ['192.0.0.0/29', 'IPv4 service continuity', 'RFC 7335'],
  ['192.0.0.8/32', 'IPv4 dummy', 'RFC 7600'],
  ['192.0.0.9/32', 'PCP anycast', 'RFC 7723'],
  ['192.0.0.10/32', 'TURN anycast', 'RFC 8155'],
  ['192.0.0.170/31', 'NAT64/DNS64 discovery', 'RFC 8880'],
  ['192.0.0.0/24', 'IETF protocol assignments', 'RFC 6890'],
  ['192.0.2.0/24', 'documentation', 'RFC 5737'],
  ['192.31.196.0/24', 'AS112', 'RFC 7535'],
  ['192.52.193.0/24', 'AMT', 'RFC 7450'],
  ['192.88.99.2/32', '6a44 relay anycast', 'RFC 6751'],
  ['192.88.99.0/24', 'deprecated 6to4 relay anycast', 'RFC 7526'],
  ['192.168.0.0/16', 'private', 'RFC 1918'],
  ['192.175.48.0/24', 'AS112', 'RFC 7534'],
  ['198.18.0.0/15', 'benchmarking', 'RFC 2544'],
  ['198.51.100.0/24', 'documentation', 'RFC 5737'],
  ['203.0.113.0/24', 'documentation', 'RFC 5737'],
  ['255.255.255.255/32', 'limited broadcast', 'RFC 919'],
  ['240.0.0.0/4', 'reserved', 'RFC 1112'],
  // Not in the special-purpose registry, in the IPv4 address space registry:
  ['224.0.0.0/4', 'multicast', 'RFC 5771'],
];

/** The two translation prefixes judged by the IPv4 address they carry. */
const IPV6_EMBEDDING: [string, string][] = [
  ['::ffff:0:0/96', 'IPv4-mapped, RFC 4291'],
  ['64:ff9b::/96', 'NAT64, RFC 6052'],
];

const IPV6: [string, string, string][] = [
  ['::1/128', 'loopback', 'RFC 4291'],
  ['::/128', 'unspecified', 'RFC 4291'],
  ['64:ff9b:1::/48', 'local-use NAT64', 'RFC 8215'],
  ['100::/64', 'discard-only', 'RFC 6666'],
  ['100:0:0:1::/64', 'IPv6 dummy', 'RFC 9780'],
  ['2001::/32', 'Teredo', 'RFC 4380'],
  ['2001:1::1/128', 'PCP anycast', 'RFC 7723'],
  ['2001:1::2/128', 'TURN anycast', 'RFC 8155'],
  ['2001:1::3/128', 'DNS-SD SRP anycast', 'RFC 9665'],
  ['2001:2::/48', 'benchmarking', 'RFC 5180'],
  ['2001:3::/32', 'AMT', 'RFC 7450'],
  ['2001:4:112::/48', 'AS112', 'RFC 7535'],
  ['2001:10::/28', 'deprecated ORCHID', 'RFC 4843'],
  ['2001:20::/28', 'ORCHIDv2', 'RFC 7343'],
  ['2001:30::/28', 'drone remote ID', 'RFC 9374'],
  ['2001::/23', 'IETF protocol assignments', 'RFC 2928'],
  ['2001:db8::/32', 'documentation', 'RFC 3849'],
  ['2002::/16', '6to4', 'RFC 3056'],
  ['2620:4f:8000::/48', 'AS112', 'RFC 7534'],
  ['3fff::/20', 'documentation', 'RFC 9637'],
  ['5f00::/16', 'SRv6 SID', 'RFC 9602'],
  ['fc00::/7', 'private', 'RFC 4193'],
  ['fe80::/10', 'link-local', 'RFC 4291'],
  // Not in the special-purpose registry, in the IPv6 address space registry:
  ['fec0::/10', 'site-local', 'RFC 3879'],
  ['ff00::/8', 'multicast', 'RFC 4291'],
];
/** Everything else outside global unicast: reserved or unassigned by IETF. */
const GLOBAL_UNICAST_V6 = '2000::/3';

function v4ToInt(ip: string): bigint {
  return ip.split('.').reduce((n, part) => n * 256n + BigInt(Number(part)), 0n);
}

/** Eight 16-bit groups, with an optional embedded dotted IPv4 tail, as one 128-bit integer. */
function v6ToInt(ip: string): bigint {
  let s = ip.split('%')[0];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (dotted) {
    const n = v4ToInt(dotted[1]);
    s = `${s.slice(0, -dotted[1].length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = s.includes('::') ? s.split('::') : [s, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = [...h, ...(tail === undefined ? [] : Array<string>(8 - h.length - t.length).fill('0')), ...t];
  return groups.reduce((n, g) => (n << 16n) + BigInt(parseInt(g, 16)), 0n);
}

interface Compiled {
  range: SpecialRange;
  base: bigint;
  mask: bigint;
}

function compile(prefix: string, bits: number, toInt: (ip: string) => bigint): Omit<Compiled, 'range'> {
  const [ip, len] = prefix.split('/');
  const mask = ((1n << BigInt(bits)) - 1n) ^ ((1n << BigInt(bits - Number(len))) - 1n);
  return { base: toInt(ip) & mask, mask };
}

const compiled = (list: [string, string, string][], bits: number, toInt: (ip: string) => bigint): Compiled[] =>
  list.map(([prefix, name, rfc]) => ({ range: { prefix, name, rfc }, ...compile(prefix, bits, toInt) }));

const V4 = compiled(IPV4, 32, v4ToInt);
const V6 = compiled(IPV6, 128, v6ToInt);
const EMBEDDING = IPV6_EMBEDDING.map(([prefix, via]) => ({ via, ...compile(prefix, 128, v6ToInt) }));
const UNICAST = compile(GLOBAL_UNICAST_V6, 128, v6ToInt);

const match = (list: Compiled[], n: bigint) => list.find((c) => (n & c.mask) === c.base)?.range ?? null;

/** The special-purpose range holding this address, or null for an ordinary public address. */
export function specialRange(ip: string): SpecialRange | null {
  const family = isIP(ip.split('%')[0]);
  if (family === 4) return match(V4, v4ToInt(ip));
  if (family !== 6) return { prefix: ip, name: 'invalid', rfc: 'not an IP address' };
  const n = v6ToInt(ip);
  for (const e of EMBEDDING) {
    if ((n & e.mask) === e.base) {
      const inner = match(V4, n & 0xffffffffn);
      return inner && { ...inner, rfc: `${inner.rfc}, via ${e.via}` };
    }
  }
  return (
    match(V6, n) ??
    ((n & UNICAST.mask) === UNICAST.base
      ? null
      : { prefix: '::/0 outside 2000::/3', name: 'reserved', rfc: 'RFC 4291' })
  );
}

/** The registries as data, for the tests that check each entry is refused. */
export const SPECIAL_RANGES = { ipv4: IPV4, ipv6: IPV6, ipv6Embedding: IPV6_EMBEDDING };
