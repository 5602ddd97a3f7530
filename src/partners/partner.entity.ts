import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { SignatureScheme } from '../platform/index.js';

@Entity('partners')
export class Partner {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('text') name: string;
  /** sha256 of the API key: the key itself is shown once and never stored. */
  @Column('text', { name: 'api_key_hash', unique: true }) apiKeyHash: string;
  /** How callbacks are signed: `hmac-sha256` (`v1`) or `ed25519` (`v1a`). */
  @Column('text', { name: 'signature_scheme' }) signatureScheme: SignatureScheme;
  /**
   * The signing key (a `whsec_` secret or a `whsk_` Ed25519 private key), sealed with SECRETS_KEY
   * (secret-box.ts), never in clear.
   */
  @Column('text', { name: 'signing_secret' }) signingSecret: string;
  /** `whpk_…` of an Ed25519 signing key (null for a secret): no secret, the partner verifies with it. */
  @Column('text', { name: 'signing_public_key', nullable: true }) signingPublicKey: string | null;
  /** The key before the last rotation or switch (sealed); callbacks are signed with it too until it expires. */
  @Column('text', { name: 'previous_signing_secret', nullable: true }) previousSigningSecret: string | null;
  /** `whpk_…` of the previous key when it is an Ed25519 one. */
  @Column('text', { name: 'previous_signing_public_key', nullable: true }) previousSigningPublicKey: string | null;
  @Column('timestamptz', { name: 'previous_secret_expires_at', nullable: true }) previousSecretExpiresAt: Date | null;
  /** sha256 of the API key a rotation replaced; it authenticates until previousKeyExpiresAt. */
  @Column('text', { name: 'previous_api_key_hash', nullable: true }) previousApiKeyHash: string | null;
  @Column('timestamptz', { name: 'previous_key_expires_at', nullable: true }) previousKeyExpiresAt: Date | null;
  /** When the API key was last replaced (null: never): shown to operators, never the key. */
  @Column('timestamptz', { name: 'api_key_rotated_at', nullable: true }) apiKeyRotatedAt: Date | null;
  /** Where the partner's operational events go (checked as a callback URL); null: none sent. */
  @Column('text', { name: 'operations_url', nullable: true }) operationsUrl: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}
