import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { AmountDto } from '../companies/company.dto.js';
import { CALLBACK_URL } from '../../platform/index.js';

export class CreateWithdrawalDto extends AmountDto {
  @ApiPropertyOptional({ ...CALLBACK_URL, description: 'URL receiving WithdrawalRequestStatusChanged (1)' })
  @IsOptional()
  @IsString()
  status_callback?: string;

  @ApiPropertyOptional({
    ...CALLBACK_URL,
    description: 'URL receiving LoanPaymentRegistered (4) for the loan created at pay-out',
  })
  @IsOptional()
  @IsString()
  loan_status_callback?: string;
}
