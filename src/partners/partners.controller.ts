import { Access } from '../access/route-access.js';
import { Doc } from '../openapi/api-doc.js';
import { ApiKeyRotatedResponse, PartnerCreatedResponse, SigningSecretResponse } from './partner.responses.js';
import { Body, Controller, HttpCode, Param, Post, UseInterceptors } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsInt, IsString, Length, Max, Min } from 'class-validator';
import { IsOmittable } from '../http/validation.js';
import { IdempotencyInterceptor } from '../idempotency/idempotency.interceptor.js';
import { Actor, AuditAction, CurrentActor } from '../operators/actor.js';
import { PartnersService } from './partners.service.js';
import { ParseUuid } from '../http/strict-params.js';

export class CreatePartnerDto {
  @ApiProperty({ example: 'Acme Bank' })
  @IsString()
  @Length(1, 200)
  name: string;
}

/** How long the replaced key keeps working. */
export const DEFAULT_PREVIOUS_KEY_VALID_HOURS = 24;

export class RotateApiKeyDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 72, default: DEFAULT_PREVIOUS_KEY_VALID_HOURS, description: 'hours the current key keeps working; 0 stops it within a second, in every process' })
  @IsOmittable()
  @IsInt()
  @Min(0)
  @Max(72)
  previousKeyValidHours?: number;
}

@ApiTags('operator')
@Controller('admin/v1/partners')
export class PartnersController {
  constructor(private readonly partners: PartnersService) {}

  /** Returns the partner with its apiKey and signingSecret: shown this once only. */
  @Doc('Create a partner: apiKey and signingSecret are shown once', PartnerCreatedResponse, [400, 413], { status: 201, idempotent: true })
  @Access.operator('admin')
  @AuditAction('partner.create')
  @Post()
  @UseInterceptors(IdempotencyInterceptor)
  async create(@CurrentActor() actor: Actor, @Body() dto: CreatePartnerDto) {
    const p = await this.partners.create(actor, dto.name);
    return { ...p, createdAt: p.createdAt.toISOString() };
  }

  @Doc('Rotate the signing secret (the old one signs too for 24 h)', SigningSecretResponse, [400, 404, 413])
  @Access.operator('admin')
  @AuditAction('partner.signing-secret.rotate')
  @Post(':partnerId/rotate-signing-secret')
  @HttpCode(200)
  rotate(@CurrentActor() actor: Actor, @Param('partnerId', ParseUuid) id: string) {
    return this.partners.rotateSigningSecret(actor, id);
  }

  /** A leaked or departing key is replaced without recreating the partner. */
  @Doc('Rotate the API key: a new one (shown once); the current one works until previousKeyExpiresAt', ApiKeyRotatedResponse, [400, 404, 413])
  @Access.operator('admin')
  @AuditAction('partner.api-key.rotate')
  @Post(':partnerId/rotate-api-key')
  @HttpCode(200)
  rotateApiKey(@CurrentActor() actor: Actor, @Param('partnerId', ParseUuid) id: string, @Body() dto: RotateApiKeyDto) {
    return this.partners.rotateApiKey(actor, id, dto?.previousKeyValidHours ?? DEFAULT_PREVIOUS_KEY_VALID_HOURS);
  }
}
