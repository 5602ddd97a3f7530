import { ApiOperator, Doc } from '../common/api-doc.js';
import { PartnerCreatedResponse, SigningSecretResponse } from '../common/responses.js';
import { Body, Controller, HttpCode, Param, Post, UseGuards, UseInterceptors } from '@nestjs/common';
import { ApiProperty, ApiTags } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';
import { IdempotencyInterceptor } from '../common/idempotency.interceptor.js';
import { AdminGuard } from './auth.guards.js';
import { PartnersService } from './partners.service.js';
import { ParseUuid } from '../common/strict-params.js';

export class CreatePartnerDto {
  @ApiProperty({ example: 'Acme Bank' })
  @IsString()
  @Length(1, 200)
  name: string;
}

@ApiTags('operator')
@ApiOperator()
@UseGuards(AdminGuard)
@Controller('admin/v1/partners')
export class PartnersController {
  constructor(private readonly partners: PartnersService) {}

  /** Returns the partner with its apiKey and signingSecret: shown this once only. */
  @Doc('Create a partner: apiKey and signingSecret are shown once', PartnerCreatedResponse, [400, 413], { status: 201, idempotent: true })
  @Post()
  @UseInterceptors(IdempotencyInterceptor)
  async create(@Body() dto: CreatePartnerDto) {
    const p = await this.partners.create(dto.name);
    return { ...p, createdAt: p.createdAt.toISOString() };
  }

  @Doc('Rotate the signing secret (the old one signs too for 24 h)', SigningSecretResponse, [400, 404, 413])
  @Post(':partnerId/rotate-signing-secret')
  @HttpCode(200)
  rotate(@Param('partnerId', ParseUuid) id: string) {
    return this.partners.rotateSigningSecret(id);
  }
}
