import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { moneyColumn } from '../../platform/index.js';
import type { LimitRequestStatus } from './limit-request-status.js';

@Entity('limit_requests')
export class LimitRequest {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid', { name: 'company_id' }) companyId: string;
  @Column('numeric', { precision: 18, scale: 2, transformer: moneyColumn }) amount: bigint;
  @Column('text') status: LimitRequestStatus;
  @Column('text', { name: 'status_callback', nullable: true }) statusCallback: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
}
