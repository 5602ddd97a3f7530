import { ApiProperty } from '@nestjs/swagger';
import { currency, money, nullableUuid, timestamp, url, uuid } from '../../platform/index.js';

const WITHDRAWAL_STATUS = {
  type: 'string',
  example: 'paid_out',
  description: 'created, accepted, rejected, cancelled, paid_out, repaid; open-ended: clients must tolerate new values',
} as const;

export class WithdrawalResponse {
  @ApiProperty(uuid) id: string;
  @ApiProperty(uuid) companyId: string;
  @ApiProperty(money('2500.50')) amount: string;
  @ApiProperty(currency) currency: string;
  @ApiProperty(WITHDRAWAL_STATUS) status: string;
  @ApiProperty(url('receives WithdrawalRequestStatusChanged (1)')) status_callback: string | null;
  @ApiProperty(url('receives LoanPaymentRegistered (4)')) loan_status_callback: string | null;
  @ApiProperty(nullableUuid) loanId: string | null;
  @ApiProperty(timestamp) createdAt: string;
  @ApiProperty(timestamp) updatedAt: string;
}

export class WithdrawalStatusResponse {
  @ApiProperty(uuid) withdrawalId: string;
  @ApiProperty(WITHDRAWAL_STATUS) status: string;
  @ApiProperty(timestamp) updatedAt: string;
}
