import { ApiProperty } from '@nestjs/swagger';
import { CREDIT_STATUSES } from '../domain/credit-status.js';
import { currency, money, timestamp, url, uuid, variantOnly } from '../../platform/index.js';

export class CompanyResponse {
  @ApiProperty(uuid) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ nullable: true, type: 'string' }) registrationNumber: string | null;
  @ApiProperty(currency) currency: string;
  // One of the two, by the deployment's API variant: the document of a variant shows only its own.
  @ApiProperty({ ...url('the organization callback URL (variant A)'), ...variantOnly('A') }) callback?: string | null;
  @ApiProperty({ ...url('the organization callback URL (variant B)'), ...variantOnly('B') }) status_callback?:
    string | null;
  @ApiProperty(timestamp) createdAt: string;
}

export class CreditStatusResponse {
  @ApiProperty(uuid) companyId: string;
  @ApiProperty({ enum: CREDIT_STATUSES }) creditStatus: string;
  @ApiProperty(money('10000.00')) creditLimit: string;
  @ApiProperty(money('2500.50')) borrowedAmount: string;
  @ApiProperty({ ...money('7499.50'), description: 'creditLimit − borrowedAmount' }) creditBalance: string;
  @ApiProperty(currency) currency: string;
  @ApiProperty(timestamp) updatedAt: string;
}

export class TermsResponse {
  @ApiProperty(uuid) companyId: string;
  @ApiProperty(money('10000.00')) creditLimit: string;
  @ApiProperty(currency) currency: string;
  @ApiProperty({
    type: 'string',
    pattern: '^\\d+\\.\\d{2}$',
    example: '7.50',
    description: 'percent per year, exactly 2 decimals',
  })
  annualInterestRate: string;
  @ApiProperty({ type: 'integer', example: 30 }) repaymentTermDays: number;
  @ApiProperty(timestamp) updatedAt: string;
}
