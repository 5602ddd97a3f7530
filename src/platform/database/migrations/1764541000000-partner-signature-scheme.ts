import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A partner's signature scheme: `hmac-sha256` (Standard Webhooks `v1`, every partner so far) or
 * `ed25519` (`v1a`). The private key of an `ed25519` partner is stored sealed in `signing_secret`
 * as `whsk_…`, as a secret is (`previous_signing_secret` likewise holds either kind during an
 * overlap); its public key, which is no secret, in clear beside it so that the partner's own view
 * lists it without opening anything. Constant defaults and nullable columns: nothing is rewritten.
 */
export class PartnerSignatureScheme1764541000000 implements MigrationInterface {
  name = 'PartnerSignatureScheme1764541000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE partners
        ADD COLUMN signature_scheme text NOT NULL DEFAULT 'hmac-sha256'
          CONSTRAINT partners_signature_scheme_check CHECK (signature_scheme IN ('hmac-sha256', 'ed25519')),
        ADD COLUMN signing_public_key text,
        ADD COLUMN previous_signing_public_key text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE partners
      DROP COLUMN signature_scheme, DROP COLUMN signing_public_key, DROP COLUMN previous_signing_public_key`);
  }
}
