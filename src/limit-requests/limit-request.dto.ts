import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { AmountDto } from '../companies/company.dto.js';

export class CreateLimitRequestDto extends AmountDto {
  @ApiPropertyOptional({ description: 'URL receiving LimitRequestStatusChanged (3)' })
  @IsOptional()
  @IsString()
  status_callback?: string;
}
