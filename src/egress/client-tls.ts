/**
 * A partner's client certificate as the sender presents it on https connections (mutual TLS):
 * one upload, identified by its id, which is new on every upload.
 */
export interface ClientTls {
  id: string;
  partnerId: string;
  /** PEM, leaf first, then its chain. */
  certificate: string;
  /** PEM, opened (never logged, never stored in clear). */
  key: string;
  /** PEM bundle the receiver's certificate is verified against instead of the public roots; null: the public roots. */
  serverCa: string | null;
}
