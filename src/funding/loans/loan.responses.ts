import { ApiProperty } from '@nestjs/swagger';
import { currency, money, timestamp, uuid } from '../../platform/index.js';

export class PaymentResponse {
  @ApiProperty(uuid) id: string;
  @ApiProperty(money('500.00')) amount: string;
  @ApiProperty(timestamp) paidAt: string;
}

export class LoanResponse {
  @ApiProperty(uuid) id: string;
  @ApiProperty(uuid) companyId: string;
  @ApiProperty(uuid) withdrawalId: string;
  @ApiProperty(money('2500.50')) principal: string;
  @ApiProperty(money('2000.50')) outstanding: string;
  @ApiProperty(currency) currency: string;
  @ApiProperty({ enum: ['active', 'repaid'] }) status: string;
  @ApiProperty({ type: [PaymentResponse] }) payments: PaymentResponse[];
  @ApiProperty({ type: PaymentResponse, nullable: true, description: 'the latest payment, null before the first' })
  lastPayment: PaymentResponse | null;
  @ApiProperty(timestamp) createdAt: string;
  @ApiProperty(timestamp) updatedAt: string;
}
