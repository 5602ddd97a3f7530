import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { moneyColumn } from '../../platform/index.js';
import type { WithdrawalStatus } from './withdrawal-status.js';

@Entity('withdrawal_requests')
export class WithdrawalRequest {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid', { name: 'company_id' }) companyId: string;
  @Column('numeric', { precision: 18, scale: 2, transformer: moneyColumn }) amount: bigint;
  @Column('text') status: WithdrawalStatus;
  @Column('text', { name: 'status_callback', nullable: true }) statusCallback: string | null;
  @Column('text', { name: 'loan_status_callback', nullable: true }) loanStatusCallback: string | null;
  @Column('uuid', { name: 'loan_id', nullable: true }) loanId: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
}
