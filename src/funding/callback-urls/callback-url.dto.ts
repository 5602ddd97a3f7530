import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { CALLBACK_URL, variantOnly } from '../../platform/index.js';

/** A callback URL a PATCH sets: a URL checked as at creation, or null to remove it. */
const URL_OR_NULL = { ...CALLBACK_URL, nullable: true } as const;
const MOVES =
  'Pending callbacks go to the new URL from their next attempt, failed ones when redelivered; ' +
  'null removes it (undelivered callbacks fail).';

export class CompanyCallbackDto {
  @ApiPropertyOptional({
    ...URL_OR_NULL,
    description: `URL receiving CreditLimitUpdated (0) and CreditBalanceUpdated (2). ${MOVES}`,
    ...variantOnly('A'),
  })
  @IsOptional()
  @IsString()
  callback?: string | null;

  @ApiPropertyOptional({
    ...URL_OR_NULL,
    description: `URL receiving CreditLimitUpdated (0) and CreditBalanceUpdated (2). ${MOVES}`,
    ...variantOnly('B'),
  })
  @IsOptional()
  @IsString()
  status_callback?: string | null;
}

export class LimitRequestCallbackDto {
  @ApiPropertyOptional({
    ...URL_OR_NULL,
    description: `URL receiving LimitRequestStatusChanged (3). Required. ${MOVES}`,
  })
  @IsOptional()
  @IsString()
  status_callback?: string | null;
}

export class WithdrawalCallbackDto {
  @ApiPropertyOptional({ ...URL_OR_NULL, description: `URL receiving WithdrawalRequestStatusChanged (1). ${MOVES}` })
  @IsOptional()
  @IsString()
  status_callback?: string | null;

  @ApiPropertyOptional({ ...URL_OR_NULL, description: `URL receiving LoanPaymentRegistered (4). ${MOVES}` })
  @IsOptional()
  @IsString()
  loan_status_callback?: string | null;
}
