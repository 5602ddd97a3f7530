import { Access, Actor, AuditAction, CurrentActor } from '../operators/index.js';
import {
  DEFAULT_SIGNATURE_SCHEME,
  Doc,
  IdempotencyInterceptor,
  IsOmittable,
  ParseUuid,
  SIGNATURE_SCHEMES,
  SignatureScheme,
} from '../platform/index.js';
import {
  ApiKeyRotatedResponse,
  PartnerCreatedResponse,
  SignatureSchemeResponse,
  SigningKeyResponse,
} from './partner-credentials.responses.js';
import { Body, Controller, HttpCode, Param, Post, UseInterceptors } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsIn, IsInt, IsString, Length, Max, Min } from 'class-validator';
import { PartnerSigning } from './partner-signing.service.js';
import { PartnersService } from './partners.service.js';

const SCHEME_DOC =
  'hmac-sha256: Standard Webhooks v1 (a whsec_ secret); ' +
  'ed25519: v1a (a whpk_ public key to verify with; the private key never leaves the service)';

export class CreatePartnerDto {
  @ApiProperty({ example: 'Acme Bank' })
  @IsString()
  @Length(1, 200)
  name: string;

  @ApiPropertyOptional({ enum: SIGNATURE_SCHEMES, default: DEFAULT_SIGNATURE_SCHEME, description: SCHEME_DOC })
  @IsOmittable()
  @IsIn(SIGNATURE_SCHEMES)
  signatureScheme?: SignatureScheme;
}

export class SwitchSignatureSchemeDto {
  @ApiProperty({ enum: SIGNATURE_SCHEMES, description: SCHEME_DOC })
  @IsIn(SIGNATURE_SCHEMES)
  scheme: SignatureScheme;
}

/** How long the replaced key keeps working. */
export const DEFAULT_PREVIOUS_KEY_VALID_HOURS = 24;

export class RotateApiKeyDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: 72,
    default: DEFAULT_PREVIOUS_KEY_VALID_HOURS,
    description:
      'hours the current key keeps working; 0 stops it within a second, in every process, ' +
      "and ends the partner's portal sessions and unused portal links",
  })
  @IsOmittable()
  @IsInt()
  @Min(0)
  @Max(72)
  previousKeyValidHours?: number;
}

@ApiTags('operator')
@Controller('admin/v1/partners')
export class PartnersController {
  constructor(
    private readonly partners: PartnersService,
    private readonly signing: PartnerSigning,
  ) {}

  /** Returns the partner with its apiKey and signingSecret (or signingPublicKey): shown this once only. */
  @Doc(
    'Create a partner: apiKey and signingSecret (under ed25519: signingPublicKey) are shown once',
    PartnerCreatedResponse,
    [400, 413],
    { status: 201, idempotent: true },
  )
  @Access.operator('admin')
  @AuditAction('partner.create')
  @Post()
  @UseInterceptors(IdempotencyInterceptor)
  async create(@CurrentActor() actor: Actor, @Body() dto: CreatePartnerDto) {
    const p = await this.partners.create(actor, dto.name, dto.signatureScheme ?? DEFAULT_SIGNATURE_SCHEME);
    return { ...p, createdAt: p.createdAt.toISOString() };
  }

  @Doc(
    'Rotate the signing key: a new secret (hmac-sha256) or key pair (ed25519); the old one signs too for 24 h',
    SigningKeyResponse,
    [400, 404, 413],
  )
  @Access.operator('admin')
  @AuditAction('partner.signing-secret.rotate')
  @Post(':partnerId/rotate-signing-secret')
  @HttpCode(200)
  rotate(@CurrentActor() actor: Actor, @Param('partnerId', ParseUuid) id: string) {
    return this.signing.rotate(actor, id);
  }

  /** A receiver changes its verifier without a gap: both schemes' signatures for 24 h. */
  @Doc(
    'Switch the signature scheme: a new key of that scheme; the old one signs too for 24 h',
    SignatureSchemeResponse,
    [400, 404, 413, { 409: 'the partner signs with that scheme already (a new key of it is a rotation)' }],
  )
  @Access.operator('admin')
  @AuditAction('partner.signature-scheme.switch')
  @Post(':partnerId/signature-scheme')
  @HttpCode(200)
  switchScheme(
    @CurrentActor() actor: Actor,
    @Param('partnerId', ParseUuid) id: string,
    @Body() dto: SwitchSignatureSchemeDto,
  ) {
    return this.signing.switchScheme(actor, id, dto.scheme);
  }

  /** A leaked or departing key is replaced without recreating the partner. */
  @Doc(
    'Rotate the API key: a new one (shown once); the current one works until previousKeyExpiresAt',
    ApiKeyRotatedResponse,
    [400, 404, 413],
  )
  @Access.operator('admin')
  @AuditAction('partner.api-key.rotate')
  @Post(':partnerId/rotate-api-key')
  @HttpCode(200)
  rotateApiKey(@CurrentActor() actor: Actor, @Param('partnerId', ParseUuid) id: string, @Body() dto: RotateApiKeyDto) {
    return this.partners.rotateApiKey(actor, id, dto?.previousKeyValidHours ?? DEFAULT_PREVIOUS_KEY_VALID_HOURS);
  }
}
