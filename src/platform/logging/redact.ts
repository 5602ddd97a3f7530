import { parse } from 'fast-querystring';

/** A link token's `fsp_`, each letter as itself or percent-encoded (`%66sp_`, `fsp%5F`). */
const LINK_PREFIX = '(?:f|%66)(?:s|%73)(?:p|%70)(?:_|%5f)';

/**
 * Credentials by their shapes: signing secrets (whsec_) and Ed25519 signing keys (whsk_), PEM
 * private keys (a client certificate's), API keys (fsk_), operator tokens (fso_), portal link
 * tokens (fsp_) and session cookies (fss_), sealed values (enc1:, enc2:), bearer tokens, and the
 * query strings of URLs (partners put tokens there). Whatever reaches a log line or a span (an
 * error's message, an inspected object) passes here.
 */
const SECRETS: [RegExp, string][] = [
  [/whsec_[A-Za-z0-9+/=]+/g, 'whsec_[redacted]'],
  [/whsk_[A-Za-z0-9+/=]+/g, 'whsk_[redacted]'],
  [
    /-----BEGIN ([A-Z ]*)PRIVATE KEY-----[\s\S]*?(-----END \1PRIVATE KEY-----|$)/g,
    '-----BEGIN $1PRIVATE KEY-----[redacted]',
  ],
  [/fsk_[A-Za-z0-9_-]+/g, 'fsk_[redacted]'],
  [/fso_[A-Za-z0-9_-]+/g, 'fso_[redacted]'],
  // A link token percent-encoded letter by letter (`%66sp_…`, `fsp%5F…`) as well.
  [new RegExp(`${LINK_PREFIX}[A-Za-z0-9_%-]+`, 'gi'), 'fsp_[redacted]'],
  [/fss_[A-Za-z0-9_-]+/g, 'fss_[redacted]'],
  // A portal link's token in a path without its origin (`/portal/login?token=…`), whatever it holds.
  [/([?&;]token=)[^\s&#"'<>]*/gi, '$1[redacted]'],
  [/(enc[12]):[0-9a-f]{8}:[A-Za-z0-9_-]+/g, '$1:[redacted]'],
  [/(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, '$1 [redacted]'],
  [/\b(https?:\/\/[^\s?#"'<>]*)\?[^\s#"'<>]*/gi, '$1?[redacted]'],
];

/** A query parameter name that is a portal link's `token`: in any case, with or without brackets (`token[]`). */
const TOKEN_NAME = /^token(\[[^\]]*\])?$/i;
/** The same in the raw text, where Fastify does not look (`;token=`, which it does not split on). */
const RAW_TOKEN = /(^|[&;])token(\[[^\]=]*\])?=|fsp_/i;

/**
 * Whether a query string (what follows `?`) carries a portal link's token, read as Fastify reads
 * a query (fast-querystring, the parser of its router: names and values percent-decoded, `+` a
 * space, a repeated name an array): a parameter named `token` in any spelling (`tok%65n`,
 * `TOKEN`, `token[]`, given twice), or a value holding a token (`fsp_…`) under any name; and the
 * raw text's `token=` and `fsp_` as well.
 */
export function queryCarriesLinkToken(query: string): boolean {
  if (RAW_TOKEN.test(query)) return true;
  return Object.entries(parse(query)).some(
    ([name, value]) => TOKEN_NAME.test(name) || [value].flat().some((v) => /fsp_/i.test(String(v))),
  );
}

/**
 * Whether a request target (path and query, as a client sent it) carries a portal link's token: in
 * its query ({@link queryCarriesLinkToken}) or, percent-decoded, in its path.
 */
export function targetCarriesLinkToken(target: string): boolean {
  const at = target.indexOf('?');
  const path = at < 0 ? target : target.slice(0, at);
  if (new RegExp(LINK_PREFIX, 'i').test(path)) return true;
  return at >= 0 && queryCarriesLinkToken(target.slice(at + 1).split('#')[0]);
}

/** Every query string in free text (a path or URL in a message): the whole query goes when it carries a link token. */
const redactLinkQueries = (text: string) =>
  text.replace(/\?([^\s#"'<>]*)/g, (whole, query: string) => (queryCarriesLinkToken(query) ? '?[redacted]' : whole));

export function redactSecrets(text: string): string {
  return SECRETS.reduce((t, [pattern, replacement]) => t.replace(pattern, replacement), redactLinkQueries(text));
}
