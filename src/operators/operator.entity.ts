import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { OperatorRole } from './access/operator-role.js';

@Entity('operators')
export class Operator {
  @PrimaryGeneratedColumn('uuid') id: string;
  /** 1–100 characters, unique for ever (a revoked operator's name too). */
  @Column('text') name: string;
  @Column('text') role: OperatorRole;
  /**
   * sha256 of the token, which is shown once; for the bootstrap `admin`, of the ADMIN_TOKEN it holds
   * (operators-bootstrap.ts).
   */
  @Column('text', { name: 'token_hash', nullable: true }) tokenHash: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @Column('timestamptz', { name: 'revoked_at', nullable: true }) revokedAt: Date | null;
}

/** The bootstrap operator's name: the deployment's ADMIN_TOKEN authenticates as it. */
export const BOOTSTRAP_OPERATOR = 'admin';
