import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

@Entity('idempotency_keys')
export class IdempotencyKey {
  /** A partner id, or the fixed operator scope for /admin requests. */
  @PrimaryColumn('text') scope: string;
  @PrimaryColumn('text') key: string;
  /** sha256 of method, route and body: the same key with another request is refused. */
  @Column('text', { name: 'request_hash' }) requestHash: string;
  /** null while the first request is still being processed. */
  @Column('integer', { name: 'status_code', nullable: true }) statusCode: number | null;
  /** The exact JSON text answered, sealed with SECRETS_KEY (it may hold once-shown credentials). */
  @Column('text', { name: 'response', nullable: true }) response: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}
