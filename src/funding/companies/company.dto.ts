import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsISO4217CurrencyCode, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';
import { CALLBACK_URL, IsMoneyAmount, IsOmittable, MONEY_INPUT_PATTERN, variantOnly } from '../../platform/index.js';
import { CREDIT_STATUSES, CreditStatus } from '../domain/credit-status.js';

export class CreateCompanyDto {
  @ApiProperty({ example: 'Acme Trading Ltd' })
  @IsString()
  @Length(1, 200)
  name: string;

  @ApiPropertyOptional({ example: '12345678' })
  @IsOptional()
  @IsString()
  @Length(1, 100)
  registrationNumber?: string;

  @ApiPropertyOptional({ pattern: '^[A-Z]{3}$', example: 'EUR', default: 'EUR', description: 'ISO 4217 code' })
  @IsOptional()
  @IsISO4217CurrencyCode()
  currency?: string;

  @ApiPropertyOptional({
    ...CALLBACK_URL,
    description: 'URL receiving CreditLimitUpdated (0) and CreditBalanceUpdated (2)',
    ...variantOnly('A'),
  })
  @IsOptional()
  @IsString()
  callback?: string;

  @ApiPropertyOptional({
    ...CALLBACK_URL,
    description: 'URL receiving CreditLimitUpdated (0) and CreditBalanceUpdated (2)',
    ...variantOnly('B'),
  })
  @IsOptional()
  @IsString()
  status_callback?: string;
}

export class UpdateCreditDto {
  @ApiPropertyOptional({
    pattern: MONEY_INPUT_PATTERN,
    example: '50000.00',
    description: 'decimal string, at least 0, at most 2 decimals',
  })
  @IsOmittable()
  @Matches(/^(0|[1-9]\d{0,14})(\.\d{1,2})?$/, {
    message: 'creditLimit must be a decimal string of at least 0 with at most 2 decimals',
  })
  creditLimit?: string;

  @ApiPropertyOptional({ enum: CREDIT_STATUSES })
  @IsOmittable()
  @IsIn(CREDIT_STATUSES)
  creditStatus?: CreditStatus;

  @ApiPropertyOptional({
    pattern: '^(0|[1-9]\\d{0,2})(\\.\\d{1,2})?$',
    example: '7.50',
    description: 'percent per year, 0 to 999.99',
  })
  @IsOmittable()
  @Matches(/^(0|[1-9]\d{0,2})(\.\d{1,2})?$/, {
    message: 'annualInterestRate must be a decimal string from 0 to 999.99 with at most 2 decimals',
  })
  annualInterestRate?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 3650, example: 30 })
  @IsOmittable()
  @IsInt()
  @Min(1)
  @Max(3650)
  repaymentTermDays?: number;
}

export class AmountDto {
  @ApiProperty({
    pattern: MONEY_INPUT_PATTERN,
    example: '1500.00',
    description: 'decimal string above 0, at most 2 decimals ("1500", "1500.5", "1500.50")',
  })
  @IsMoneyAmount()
  amount: string;
}
