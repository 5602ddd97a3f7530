import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsISO4217CurrencyCode, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';
import { IsMoneyAmount } from '../common/validation.js';
import { CREDIT_STATUSES, CreditStatus } from './credit-status.js';

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

  @ApiPropertyOptional({ example: 'EUR', default: 'EUR', description: 'ISO 4217 code' })
  @IsOptional()
  @IsISO4217CurrencyCode()
  currency?: string;

  @ApiPropertyOptional({ description: 'Variant A only: organization callback URL' })
  @IsOptional()
  @IsString()
  callback?: string;

  @ApiPropertyOptional({ description: 'Variant B only: organization callback URL' })
  @IsOptional()
  @IsString()
  status_callback?: string;
}

export class UpdateCreditDto {
  @ApiPropertyOptional({ example: '50000.00' })
  @IsOptional()
  @Matches(/^(0|[1-9]\d{0,14})(\.\d{1,2})?$/, { message: 'creditLimit must be a decimal string of at least 0 with at most 2 decimals' })
  creditLimit?: string;

  @ApiPropertyOptional({ enum: CREDIT_STATUSES })
  @IsOptional()
  @IsIn(CREDIT_STATUSES)
  creditStatus?: CreditStatus;

  @ApiPropertyOptional({ example: '7.50', description: 'percent per year' })
  @IsOptional()
  @Matches(/^(0|[1-9]\d{0,2})(\.\d{1,2})?$/, { message: 'annualInterestRate must be a decimal string from 0 to 999.99 with at most 2 decimals' })
  annualInterestRate?: string;

  @ApiPropertyOptional({ example: 30 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(3650)
  repaymentTermDays?: number;
}

export class AmountDto {
  @ApiProperty({ example: '1500.00' })
  @IsMoneyAmount()
  amount: string;
}
