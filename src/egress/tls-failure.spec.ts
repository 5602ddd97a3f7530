import { closedOnCertificate, tlsFailure } from './tls-failure.js';

describe('TLS handshake failures, by error code', () => {
  it.each([
    // The receiver refused our client certificate (or its absence): the alert it sent.
    [
      'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
      'the receiver requires a client certificate and none was presented (ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED)',
    ],
    [
      'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA',
      "the receiver refused the client certificate: it does not trust the certificate's issuer (unknown CA) " +
        '(ERR_SSL_TLSV1_ALERT_UNKNOWN_CA)',
    ],
    [
      'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE',
      'the receiver refused the client certificate (bad certificate) (ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE)',
    ],
    [
      'ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED',
      'the receiver refused the client certificate as expired (ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED)',
    ],
    [
      'ERR_SSL_TLSV1_ALERT_ACCESS_DENIED',
      'the receiver denied access to the client certificate presented (access denied) ' +
        '(ERR_SSL_TLSV1_ALERT_ACCESS_DENIED)',
    ],
    // Any other alert: named as the receiver sent it.
    [
      'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE',
      'the receiver ended the handshake: handshake failure (ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE)',
    ],
    [
      'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION',
      'the receiver ended the handshake: protocol version (ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION)',
    ],
    // Our side refused the receiver's certificate: Node's message names why.
    [
      'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      "the receiver's certificate was not accepted: MESSAGE (UNABLE_TO_VERIFY_LEAF_SIGNATURE)",
    ],
    [
      'DEPTH_ZERO_SELF_SIGNED_CERT',
      "the receiver's certificate was not accepted: MESSAGE (DEPTH_ZERO_SELF_SIGNED_CERT)",
    ],
    ['SELF_SIGNED_CERT_IN_CHAIN', "the receiver's certificate was not accepted: MESSAGE (SELF_SIGNED_CERT_IN_CHAIN)"],
    ['CERT_HAS_EXPIRED', "the receiver's certificate was not accepted: MESSAGE (CERT_HAS_EXPIRED)"],
    [
      'ERR_TLS_CERT_ALTNAME_INVALID',
      "the receiver's certificate was not accepted: MESSAGE (ERR_TLS_CERT_ALTNAME_INVALID)",
    ],
    // No agreement, or a plain HTTP server on an https URL's port.
    ['ERR_SSL_WRONG_VERSION_NUMBER', 'the handshake failed: wrong version number (ERR_SSL_WRONG_VERSION_NUMBER)'],
    ['EPROTO', 'the handshake failed (EPROTO)'],
    // Our own certificate or key unusable by OpenSSL.
    [
      'ERR_OSSL_X509_KEY_VALUES_MISMATCH',
      'the client certificate or its key could not be used: x509 key values mismatch ' +
        '(ERR_OSSL_X509_KEY_VALUES_MISMATCH)',
    ],
  ])('%s: %s', (code, cause) => {
    expect(tlsFailure(code, 'MESSAGE')).toBe(cause);
  });

  it.each([
    ['ECONNRESET'],
    ['ECONNREFUSED'],
    ['ENOTFOUND'],
    ['ETIMEDOUT'],
    ['ERR_STREAM_PREMATURE_CLOSE'],
    [undefined],
  ])('%s is no TLS failure', (code) => {
    expect(tlsFailure(code, 'MESSAGE')).toBeNull();
  });
});

describe('a receiver that refuses the client certificate by closing the connection', () => {
  it.each([
    [
      'ECONNRESET',
      'before-answer',
      'the receiver closed the connection after the TLS handshake, before any answer: ' +
        'it may have refused the client certificate (ECONNRESET: MESSAGE)',
    ],
    [
      'EPIPE',
      'before-answer',
      'the receiver closed the connection after the TLS handshake, before any answer: ' +
        'it may have refused the client certificate (EPIPE: MESSAGE)',
    ],
    [
      'ECONNRESET',
      'handshake',
      'the receiver closed the connection during the TLS handshake: ' +
        'it may have refused the client certificate (ECONNRESET: MESSAGE)',
    ],
  ] as const)('%s, closed at %s: %s', (code, at, cause) => {
    expect(closedOnCertificate(code, 'MESSAGE', at)).toBe(cause);
  });

  it.each([
    ['ECONNRESET', null], // no new connection watched, or the receiver had sent something back
    ['ECONNREFUSED', 'handshake'],
    ['ETIMEDOUT', 'before-answer'],
    ['ERR_STREAM_PREMATURE_CLOSE', 'before-answer'],
    [undefined, 'before-answer'],
  ] as const)('%s, closed at %s, is no refusal', (code, at) => {
    expect(closedOnCertificate(code, 'MESSAGE', at)).toBeNull();
  });
});
