// Where callbacks may go. Checked twice: at registration (syntax + DNS) and at connect time
// (the lookup the socket actually uses), so DNS rebinding cannot reach a private address.
import dns from 'node:dns';
import { isIP } from 'node:net';
import { specialRange, SpecialRange } from './special-addresses.js';

export type GuardOptions = { allowHttp: boolean; allowPrivate: boolean };
export type LookupAll = (hostname: string) => Promise<string[]>;

export class DestinationRefused extends Error {
  readonly code = 'EDESTINATIONREFUSED';
  constructor(readonly reason: string) {
    super(`destination refused: ${reason}`);
  }
}

/** Why this address must not be a callback destination (its special-purpose range), or null when it may be. */
export function isBlockedAddress(ip: string): SpecialRange | null {
  return specialRange(ip);
}

/** "a private address (10.0.0.0/8, RFC 1918)". */
export function describeReason(range: SpecialRange): string {
  return `${/^[aeiou]/i.test(range.name) ? 'an' : 'a'} ${range.name} address (${range.prefix}, ${range.rfc})`;
}

/** Special-use and private-use names (RFC 6761 localhost, RFC 6762 .local, RFC 8375 home.arpa, .internal). */
const LOCAL_NAMES = /(^|\.)(localhost|local|internal|home\.arpa)$/i;

/**
 * Ports a public receiver may use: 443, 80, and the unprivileged range. The other ports below
 * 1024 are other protocols' (SMTP, DNS, SSH, ...): a callback there could only reach a service
 * that is not a webhook receiver.
 */
export function allowedPort(port: number): boolean {
  return port === 443 || port === 80 || port >= 1024;
}

/** Refused rather than silently repaired by the URL parser (which strips or converts them). */
// eslint-disable-next-line no-control-regex -- the control characters it refuses
const UNSAFE_TEXT = /^\s|\s$|\\|[\u0000-\u001f\u007f-\u009f]/;

function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/**
 * Registration-time syntax check: the URL parsed once, then either refused (a phrase saying what
 * is wrong) or returned in the WHATWG serialisation, which is what is stored and called.
 */
export function parseCallbackUrl(
  raw: unknown,
  opts: GuardOptions,
): { url: URL; problem?: undefined } | { problem: string; url?: undefined } {
  if (typeof raw !== 'string') return { problem: 'must be a URL string' };
  if (raw.length > 2048) return { problem: 'must be at most 2048 characters' };
  if (UNSAFE_TEXT.test(raw))
    return { problem: 'must not contain surrounding whitespace, backslashes or control characters' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: 'must be an absolute https URL' };
  }
  if (url.protocol !== 'https:' && !(opts.allowHttp && url.protocol === 'http:')) {
    return { problem: opts.allowHttp ? 'must be an absolute http or https URL' : 'must be an absolute https URL' };
  }
  if (url.username || url.password) return { problem: 'must not contain user information' };
  // Percent-encoding by the serialisation can lengthen it past the limit.
  if (url.href.length > 2048) return { problem: 'must be at most 2048 characters' };
  const host = hostOf(url);
  if (!host) return { problem: 'must name a host' };
  if (opts.allowPrivate) return { url };
  if (url.port && !allowedPort(Number(url.port)))
    return { problem: `must not use port ${url.port} (below 1024, only 80 and 443 are allowed)` };
  // WHATWG URL has already normalised decimal, hex and octal IPv4 forms to dotted quads.
  if (isIP(host)) {
    const range = isBlockedAddress(host);
    return range ? { problem: `points at ${describeReason(range)}` } : { url };
  }
  if (LOCAL_NAMES.test(host.replace(/\.$/, ''))) return { problem: 'points at a local host name' };
  return { url };
}

/** parseCallbackUrl's verdict only: a phrase saying what is wrong, or null. */
export function checkCallbackUrl(raw: unknown, opts: GuardOptions): string | null {
  return parseCallbackUrl(raw, opts).problem ?? null;
}

const defaultLookupAll: LookupAll = async (hostname) =>
  (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** The registration check plus DNS: every address the host resolves to must be allowed. Returns the URL to store. */
export async function resolveCallbackUrl(
  raw: unknown,
  opts: GuardOptions,
  lookup: LookupAll = defaultLookupAll,
): Promise<{ url: string } | { problem: string }> {
  const parsed = parseCallbackUrl(raw, opts);
  if (parsed.problem !== undefined) return { problem: parsed.problem };
  const url = parsed.url.href;
  const host = hostOf(parsed.url);
  if (opts.allowPrivate || isIP(host)) return { url };
  let addresses: string[];
  try {
    addresses = await lookup(host);
  } catch {
    addresses = [];
  }
  if (addresses.length === 0) return { problem: `host ${host} does not resolve` };
  for (const address of addresses) {
    const range = isBlockedAddress(address);
    if (range) return { problem: `resolves to ${describeReason(range)} (${address})` };
  }
  return { url };
}

/** resolveCallbackUrl's verdict only: a phrase saying what is wrong, or null. */
export async function checkCallbackUrlResolved(
  raw: unknown,
  opts: GuardOptions,
  lookup: LookupAll = defaultLookupAll,
): Promise<string | null> {
  const r = await resolveCallbackUrl(raw, opts, lookup);
  return 'problem' in r ? r.problem : null;
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;
type LookupFn = (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => void;

/**
 * A `dns.lookup` for sockets: resolves, then refuses (before any connection) when an address
 * is blocked. Node skips lookup for IP-literal hosts: see assertDestinationAllowed.
 */
export function guardedLookup(opts: GuardOptions, lookup: LookupFn = dns.lookup): LookupFn {
  return (hostname, options, callback) => {
    const o = typeof options === 'object' && options !== null ? options : {};
    lookup(hostname, { ...o, all: true }, (err, result) => {
      if (err) return callback(err, o.all ? [] : '', undefined);
      const list = result as dns.LookupAddress[];
      if (!opts.allowPrivate) {
        for (const a of list) {
          const range = isBlockedAddress(a.address);
          if (range)
            return callback(
              new DestinationRefused(`${hostname} resolves to ${a.address}, ${describeReason(range)}`),
              o.all ? [] : '',
              undefined,
            );
        }
      }
      if (o.all) return callback(null, list);
      if (list.length === 0)
        return callback(
          Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }),
          '',
          undefined,
        );
      callback(null, list[0].address, list[0].family);
    });
  };
}

/** For IP-literal hosts, which never pass through lookup. */
export function assertDestinationAllowed(url: URL, opts: GuardOptions): void {
  if (opts.allowPrivate) return;
  const host = hostOf(url);
  if (!isIP(host)) return;
  const range = isBlockedAddress(host);
  if (range) throw new DestinationRefused(`${host} is ${describeReason(range)}`);
}

/** Belt and braces after connecting: the peer actually reached. */
export function checkConnectedAddress(remoteAddress: string | undefined, opts: GuardOptions): string | null {
  if (opts.allowPrivate || !remoteAddress) return null;
  const range = isBlockedAddress(remoteAddress);
  return range ? `connected to ${remoteAddress}, ${describeReason(range)}` : null;
}
