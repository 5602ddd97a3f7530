// Where callbacks may go. Checked twice: at registration (syntax + DNS) and at connect time
// (the lookup the socket actually uses), so DNS rebinding cannot reach a private address.
import dns from 'node:dns';
import { isIP } from 'node:net';

export type GuardOptions = { allowHttp: boolean; allowPrivate: boolean };
export type LookupAll = (hostname: string) => Promise<string[]>;

export class DestinationRefused extends Error {
  readonly code = 'EDESTINATIONREFUSED';
  constructor(readonly reason: string) {
    super(`destination refused: ${reason}`);
  }
}

type V4Range = [number, number, string]; // base, prefix length, reason
const V4_RANGES: V4Range[] = [
  [v4('0.0.0.0'), 8, 'unspecified'],
  [v4('10.0.0.0'), 8, 'private'],
  [v4('100.64.0.0'), 10, 'CGNAT'],
  [v4('127.0.0.0'), 8, 'loopback'],
  [v4('169.254.0.0'), 16, 'link-local'],
  [v4('172.16.0.0'), 12, 'private'],
  [v4('192.0.0.0'), 24, 'reserved'],
  [v4('192.0.2.0'), 24, 'documentation'],
  [v4('192.88.99.0'), 24, 'reserved'],
  [v4('192.168.0.0'), 16, 'private'],
  [v4('198.18.0.0'), 15, 'reserved'],
  [v4('198.51.100.0'), 24, 'documentation'],
  [v4('203.0.113.0'), 24, 'documentation'],
  [v4('224.0.0.0'), 4, 'multicast'],
  [v4('240.0.0.0'), 4, 'reserved'],
];

function v4(ip: string): number {
  return ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

function v4Blocked(n: number): string | null {
  for (const [base, bits, reason] of V4_RANGES) {
    const size = 2 ** (32 - bits);
    if (n >= base && n < base + size) return reason;
  }
  return null;
}

/** Expands an IPv6 address (with optional embedded dotted IPv4) into eight 16-bit groups. */
function v6Groups(ip: string): number[] {
  let s = ip.split('%')[0];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (dotted) {
    const n = v4(dotted[1]);
    s = `${s.slice(0, -dotted[1].length)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, tail] = s.includes('::') ? s.split('::') : [s, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((g) => parseInt(g, 16));
}

/** Why this address must not be a callback destination, or null when it may be. */
export function isBlockedAddress(ip: string): string | null {
  const family = isIP(ip.split('%')[0]);
  if (family === 4) return v4Blocked(v4(ip));
  if (family !== 6) return 'invalid';
  const g = v6Groups(ip);
  const embedded = (hi: number, lo: number) => v4Blocked(hi * 65536 + lo);
  if (g.every((x) => x === 0)) return 'unspecified';
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return 'loopback';
  // IPv4-mapped ::ffff:a.b.c.d and IPv4-compatible ::a.b.c.d: judged by the IPv4 inside.
  if (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || g[5] === 0)) return embedded(g[6], g[7]) ?? (g[5] === 0 ? 'reserved' : null);
  // NAT64 64:ff9b::/96 carries an IPv4 address too.
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return embedded(g[6], g[7]);
  if (g[0] === 0x2002) return embedded(g[1], g[2]); // 6to4
  if ((g[0] & 0xffc0) === 0xfe80) return 'link-local';
  if ((g[0] & 0xffc0) === 0xfec0) return 'site-local';
  if ((g[0] & 0xfe00) === 0xfc00) return 'private';
  if ((g[0] & 0xff00) === 0xff00) return 'multicast';
  if (g[0] === 0x2001 && g[1] === 0x0db8) return 'documentation';
  if (g[0] === 0x0100 && g.slice(1, 4).every((x) => x === 0)) return 'reserved'; // discard-only
  return null;
}

/** "a private address", "an unspecified address". */
export function describeReason(reason: string): string {
  return `${/^[aeiou]/i.test(reason) ? 'an' : 'a'} ${reason} address`;
}

const LOCAL_NAMES = /(^|\.)(localhost|local|internal)$/i;

function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/** Registration-time syntax check; returns a phrase saying what is wrong, or null. */
export function checkCallbackUrl(raw: unknown, opts: GuardOptions): string | null {
  if (typeof raw !== 'string') return 'must be a URL string';
  if (raw.length > 2048) return 'must be at most 2048 characters';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute https URL';
  }
  if (url.protocol !== 'https:' && !(opts.allowHttp && url.protocol === 'http:')) {
    return opts.allowHttp ? 'must be an absolute http or https URL' : 'must be an absolute https URL';
  }
  if (url.username || url.password) return 'must not contain user information';
  const host = hostOf(url);
  if (!host) return 'must name a host';
  if (opts.allowPrivate) return null;
  // WHATWG URL has already normalised decimal, hex and octal IPv4 forms to dotted quads.
  if (isIP(host)) {
    const reason = isBlockedAddress(host);
    return reason ? `points at ${describeReason(reason)}` : null;
  }
  if (LOCAL_NAMES.test(host.replace(/\.$/, ''))) return 'points at a local host name';
  return null;
}

const defaultLookupAll: LookupAll = async (hostname) =>
  (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** The registration check plus DNS: every address the host resolves to must be allowed. */
export async function checkCallbackUrlResolved(raw: unknown, opts: GuardOptions, lookup: LookupAll = defaultLookupAll): Promise<string | null> {
  const problem = checkCallbackUrl(raw, opts);
  if (problem || opts.allowPrivate) return problem;
  const host = hostOf(new URL(raw as string));
  if (isIP(host)) return null;
  let addresses: string[];
  try {
    addresses = await lookup(host);
  } catch {
    addresses = [];
  }
  if (addresses.length === 0) return `host ${host} does not resolve`;
  for (const address of addresses) {
    const reason = isBlockedAddress(address);
    if (reason) return `resolves to ${describeReason(reason)} (${address})`;
  }
  return null;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;
type LookupFn = (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => void;

/**
 * A `dns.lookup` for sockets: resolves, then refuses (before any connection) when an address
 * is blocked. Node skips lookup for IP-literal hosts: see assertDestinationAllowed.
 */
export function guardedLookup(opts: GuardOptions, lookup: LookupFn = dns.lookup as unknown as LookupFn): LookupFn {
  return (hostname, options, callback) => {
    const o = typeof options === 'object' && options !== null ? options : {};
    lookup(hostname, { ...o, all: true }, (err, result) => {
      if (err) return callback(err, o.all ? [] : '', undefined);
      const list = result as dns.LookupAddress[];
      if (!opts.allowPrivate) {
        for (const a of list) {
          const reason = isBlockedAddress(a.address);
          if (reason) return callback(new DestinationRefused(`${hostname} resolves to ${a.address}, ${describeReason(reason)}`), o.all ? [] : '', undefined);
        }
      }
      if (o.all) return callback(null, list);
      if (list.length === 0) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', undefined);
      callback(null, list[0].address, list[0].family);
    });
  };
}

/** For IP-literal hosts, which never pass through lookup. */
export function assertDestinationAllowed(url: URL, opts: GuardOptions): void {
  if (opts.allowPrivate) return;
  const host = hostOf(url);
  if (!isIP(host)) return;
  const reason = isBlockedAddress(host);
  if (reason) throw new DestinationRefused(`${host} is ${describeReason(reason)}`);
}

/** Belt and braces after connecting: the peer actually reached. */
export function checkConnectedAddress(remoteAddress: string | undefined, opts: GuardOptions): string | null {
  if (opts.allowPrivate || !remoteAddress) return null;
  const reason = isBlockedAddress(remoteAddress);
  return reason ? `connected to ${remoteAddress}, ${describeReason(reason)}` : null;
}
