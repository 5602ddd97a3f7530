import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsISO8601, IsOptional } from 'class-validator';
import { AmountDto } from '../companies/company.dto.js';

export class RegisterPaymentDto extends AmountDto {
  @ApiPropertyOptional({
    format: 'date-time',
    example: '2026-11-22T10:00:00Z',
    description: 'defaults to now; not in the future',
  })
  @IsOptional()
  @IsISO8601({ strict: true })
  paidAt?: string;
}
