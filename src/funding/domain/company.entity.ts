import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { moneyColumn } from '../../platform/index.js';
import type { CreditStatus } from './credit-status.js';

@Entity('companies')
export class Company {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid', { name: 'partner_id' }) partnerId: string;
  @Column('text') name: string;
  @Column('text', { name: 'registration_number', nullable: true }) registrationNumber: string | null;
  @Column('char', { length: 3 }) currency: string;
  /** The organization callback URL (`callback` in variant A, `status_callback` in B). */
  @Column('text', { name: 'callback_url', nullable: true }) callbackUrl: string | null;
  @Column('text', { name: 'credit_status' }) creditStatus: CreditStatus;
  @Column('numeric', { name: 'credit_limit', precision: 18, scale: 2, transformer: moneyColumn }) creditLimit: bigint;
  @Column('numeric', { name: 'borrowed_amount', precision: 18, scale: 2, transformer: moneyColumn })
  borrowedAmount: bigint;
  /** Percent per year, kept as the decimal string PostgreSQL returns ("7.50"). */
  @Column('numeric', { name: 'annual_interest_rate', precision: 7, scale: 2 }) annualInterestRate: string;
  @Column('integer', { name: 'repayment_term_days' }) repaymentTermDays: number;
  @Column('timestamptz', { name: 'credit_updated_at' }) creditUpdatedAt: Date;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}
