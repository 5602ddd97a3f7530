import { Body, Controller, HttpCode, Param, ParseUUIDPipe, Post, UseGuards, UseInterceptors } from '@nestjs/common';
import { ApiBearerAuth, ApiProperty, ApiTags } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';
import { IdempotencyInterceptor } from '../common/idempotency.interceptor.js';
import { AdminGuard } from './auth.guards.js';
import { PartnersService } from './partners.service.js';

export class CreatePartnerDto {
  @ApiProperty({ example: 'Acme Bank' })
  @IsString()
  @Length(1, 200)
  name: string;
}

@ApiTags('operator')
@ApiBearerAuth()
@UseGuards(AdminGuard)
@Controller('admin/v1/partners')
export class PartnersController {
  constructor(private readonly partners: PartnersService) {}

  /** Returns the partner with its apiKey and signingSecret: shown this once only. */
  @Post()
  @UseInterceptors(IdempotencyInterceptor)
  async create(@Body() dto: CreatePartnerDto) {
    const p = await this.partners.create(dto.name);
    return { ...p, createdAt: p.createdAt.toISOString() };
  }

  @Post(':partnerId/rotate-signing-secret')
  @HttpCode(200)
  rotate(@Param('partnerId', ParseUUIDPipe) id: string) {
    return this.partners.rotateSigningSecret(id);
  }
}
