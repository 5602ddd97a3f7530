import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { LoanPayment } from '../withdrawals/loan.entity.js';

/** A loan's payments as TypeORM reads them (a payment is inserted by the change that registers it). */
@Injectable()
export class LoanPaymentRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** A loan's payments, oldest first. */
  payments(loanId: string): Promise<LoanPayment[]> {
    return this.db.manager.find(LoanPayment, { where: { loanId }, order: { paidAt: 'ASC', createdAt: 'ASC' } });
  }
}
