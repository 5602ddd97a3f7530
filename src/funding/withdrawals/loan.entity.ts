import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { moneyColumn } from '../../platform/index.js';

export type LoanStatus = 'active' | 'repaid';

@Entity('loans')
export class Loan {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid', { name: 'company_id' }) companyId: string;
  @Column('uuid', { name: 'withdrawal_id', unique: true }) withdrawalId: string;
  @Column('numeric', { precision: 18, scale: 2, transformer: moneyColumn }) principal: bigint;
  @Column('numeric', { precision: 18, scale: 2, transformer: moneyColumn }) outstanding: bigint;
  @Column('char', { length: 3 }) currency: string;
  @Column('text') status: LoanStatus;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
}

@Entity('loan_payments')
export class LoanPayment {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid', { name: 'loan_id' }) loanId: string;
  @Column('numeric', { precision: 18, scale: 2, transformer: moneyColumn }) amount: bigint;
  @Column('timestamptz', { name: 'paid_at' }) paidAt: Date;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}
