/**
 * Credentials by their shapes: signing secrets (whsec_) and Ed25519 signing keys (whsk_), PEM
 * private keys (a client certificate's), API keys (fsk_), operator tokens (fso_), portal link tokens (fsp_) and session cookies (fss_), sealed values (enc1:, enc2:),
 * bearer tokens, and the query strings of URLs (partners put tokens there). Whatever reaches a
 * log line or a span (an error's message, an inspected object) passes here.
 */
const SECRETS: [RegExp, string][] = [
  [/whsec_[A-Za-z0-9+/=]+/g, 'whsec_[redacted]'],
  [/whsk_[A-Za-z0-9+/=]+/g, 'whsk_[redacted]'],
  [/-----BEGIN ([A-Z ]*)PRIVATE KEY-----[\s\S]*?(-----END \1PRIVATE KEY-----|$)/g, '-----BEGIN $1PRIVATE KEY-----[redacted]'],
  [/fsk_[A-Za-z0-9_-]+/g, 'fsk_[redacted]'],
  [/fso_[A-Za-z0-9_-]+/g, 'fso_[redacted]'],
  [/fsp_[A-Za-z0-9_-]+/g, 'fsp_[redacted]'],
  [/fss_[A-Za-z0-9_-]+/g, 'fss_[redacted]'],
  // A portal link's token in a path without its origin (`/portal/login?token=…`), whatever it holds.
  [/([?&;]token=)[^\s&#"'<>]*/gi, '$1[redacted]'],
  [/(enc[12]):[0-9a-f]{8}:[A-Za-z0-9_-]+/g, '$1:[redacted]'],
  [/(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, '$1 [redacted]'],
  [/\b(https?:\/\/[^\s?#"'<>]*)\?[^\s#"'<>]*/gi, '$1?[redacted]'],
];

export function redactSecrets(text: string): string {
  return SECRETS.reduce((t, [pattern, replacement]) => t.replace(pattern, replacement), text);
}
