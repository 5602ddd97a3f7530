import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { AmountDto } from '../companies/company.dto.js';
import { CALLBACK_URL } from '../../platform/index.js';

export class CreateLimitRequestDto extends AmountDto {
  @ApiPropertyOptional({ ...CALLBACK_URL, description: 'URL receiving LimitRequestStatusChanged (3)' })
  @IsOptional()
  @IsString()
  status_callback?: string;
}
