// What a failed TLS handshake's error code says happened, in words an integrator acts on. Node
// gives the receiver's certificate check's failures as OpenSSL's verification codes (and its own
// host name check's), the receiver's refusal as the TLS alert it sent (ERR_SSL_<version>_ALERT_
// <ALERT>), other handshake failures as ERR_SSL_<reason>, and a client key or certificate OpenSSL
// cannot use as ERR_OSSL_<reason>. Decided by the code alone, never by the message's text; a
// receiver that refuses the client certificate by closing the connection, by the code and the
// connection's state (connection-watch.ts).
import type { ClosedAt } from './connection-watch.js';

/** OpenSSL's verification failures of the receiver's certificate (X509_V_ERR_* as Node names them). */
const RECEIVER_CERTIFICATE_CODES = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_CRL',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECRYPT_CRL_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'CERT_SIGNATURE_FAILURE',
  'CRL_SIGNATURE_FAILURE',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'CRL_NOT_YET_VALID',
  'CRL_HAS_EXPIRED',
  'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD',
  'ERROR_IN_CRL_LAST_UPDATE_FIELD',
  'ERROR_IN_CRL_NEXT_UPDATE_FIELD',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_CHAIN_TOO_LONG',
  'CERT_REVOKED',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Alerts by which a receiver refuses the certificate it was given (or the lack of one). */
const CERTIFICATE_ALERTS: Record<string, string> = {
  CERTIFICATE_REQUIRED: 'the receiver requires a client certificate and none was presented',
  UNKNOWN_CA: "the receiver refused the client certificate: it does not trust the certificate's issuer (unknown CA)",
  BAD_CERTIFICATE: 'the receiver refused the client certificate (bad certificate)',
  UNSUPPORTED_CERTIFICATE: 'the receiver refused the client certificate (unsupported certificate)',
  CERTIFICATE_REVOKED: 'the receiver refused the client certificate as revoked',
  CERTIFICATE_EXPIRED: 'the receiver refused the client certificate as expired',
  CERTIFICATE_UNKNOWN: 'the receiver refused the client certificate (certificate unknown)',
  ACCESS_DENIED: 'the receiver denied access to the client certificate presented (access denied)',
};

const ALERT = /^ERR_SSL_(?:SSLV3|TLSV1|TLSV13)_ALERT_([A-Z_]+)$/;
const words = (name: string) => name.toLowerCase().replace(/_/g, ' ');

/**
 * The cause of a TLS handshake failure, from its error's code (and Node's message for the
 * receiver's certificate check, which names the certificate problem plainly); null when the code
 * is not a TLS failure.
 */
export function tlsFailure(code: string | undefined, message: string): string | null {
  if (!code) return null;
  if (RECEIVER_CERTIFICATE_CODES.has(code)) return `the receiver's certificate was not accepted: ${message} (${code})`;
  const alert = ALERT.exec(code);
  if (alert)
    return `${CERTIFICATE_ALERTS[alert[1]] ?? `the receiver ended the handshake: ${words(alert[1])}`} (${code})`;
  if (code.startsWith('ERR_SSL_')) return `the handshake failed: ${words(code.slice('ERR_SSL_'.length))} (${code})`;
  if (code.startsWith('ERR_OSSL_'))
    return `the client certificate or its key could not be used: ${words(code.slice('ERR_OSSL_'.length))} (${code})`;
  if (code === 'EPROTO') return `the handshake failed (${code})`;
  return null;
}

/** The codes Node gives a connection the peer reset or closed ("socket hang up" is ECONNRESET too). */
const CLOSED_CODES = new Set(['ECONNRESET', 'EPIPE']);

const CLOSED_WHEN: Record<ClosedAt, string> = {
  handshake: 'the receiver closed the connection during the TLS handshake',
  'before-answer': 'the receiver closed the connection after the TLS handshake, before any answer',
};

/**
 * A receiver's refusal of the client certificate presented, told by the connection's closing
 * rather than by an alert: the connection (a new one, `closedAt` where it was then) reset or
 * closed by the receiver. Null for any other error, or when the connection had got further. The
 * underlying error stays in the text.
 */
export function closedOnCertificate(
  code: string | undefined,
  message: string,
  closedAt: ClosedAt | null,
): string | null {
  if (!closedAt || !code || !CLOSED_CODES.has(code)) return null;
  return `${CLOSED_WHEN[closedAt]}: it may have refused the client certificate (${code}: ${message})`;
}
