import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity('partners')
export class Partner {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('text') name: string;
  /** sha256 of the API key: the key itself is shown once and never stored. */
  @Column('text', { name: 'api_key_hash', unique: true }) apiKeyHash: string;
  /** Sealed with SECRETS_KEY (secret-box.ts), never in clear. */
  @Column('text', { name: 'signing_secret' }) signingSecret: string;
  /** The secret before the last rotation; callbacks are signed with it too until it expires. */
  @Column('text', { name: 'previous_signing_secret', nullable: true }) previousSigningSecret: string | null;
  @Column('timestamptz', { name: 'previous_secret_expires_at', nullable: true }) previousSecretExpiresAt: Date | null;
  /** sha256 of the API key a rotation replaced; it authenticates until previousKeyExpiresAt. */
  @Column('text', { name: 'previous_api_key_hash', nullable: true }) previousApiKeyHash: string | null;
  @Column('timestamptz', { name: 'previous_key_expires_at', nullable: true }) previousKeyExpiresAt: Date | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}
