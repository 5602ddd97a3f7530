import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A partner's client certificate for mutual TLS (at most one): the certificate chain and the
 * optional private CA bundle for the receiver's certificate in clear (no secret), the private key
 * sealed with SECRETS_KEY (context `partners.client_key`), and what the partner and the expiry
 * gauge read without parsing PEM. `id` is new on every upload: connections are pooled per id, so
 * no connection made with a replaced certificate is used again.
 */
export class PartnerClientCertificates1764541200000 implements MigrationInterface {
  name = 'PartnerClientCertificates1764541200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE partner_client_certificates (
        partner_id uuid PRIMARY KEY REFERENCES partners(id),
        id uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
        certificate text NOT NULL,
        private_key text NOT NULL,
        server_ca text,
        subject text NOT NULL,
        issuer text NOT NULL,
        not_after timestamptz NOT NULL,
        fingerprint256 text NOT NULL,
        uploaded_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE partner_client_certificates');
  }
}
