import { Body, Controller, HttpCode, Post, UseInterceptors } from '@nestjs/common';
import { ApiBody, ApiTags } from '@nestjs/swagger';
import { Access, Actor, AuditAction, CurrentActor } from '../operators/index.js';
import { Doc, IdempotencyInterceptor } from '../platform/index.js';
import { CurrentPartner } from './current-partner.js';
import { PartnerSigning } from './partner-signing.service.js';
import { SwitchSignatureSchemeDto } from './partners.controller.js';
import { Partner } from './partner.entity.js';
import { SignatureSchemeResponse, SigningKeyResponse } from './partner-credentials.responses.js';

/** A roll takes no body: any property in one is refused (400 naming it), never ignored. */
export class RollSigningKeyDto {}

const OVERLAP = 'the replaced key signs too for 24 h (a change within them replaces the key it replaced, at once)';
const AUDITED = 'audited with the partner as actor';

/**
 * A partner rolls its own signing key (API §3, "The partner itself"): the operators' routes'
 * service, PartnerSigning, with the partner as the audit entry's actor. A retry whose answer was
 * lost would otherwise replace the key again, its new secret never seen and the key the receiver
 * still verifies with dropped at once: so these take an Idempotency-Key, as creates do.
 */
@ApiTags('partner')
@Access.partner()
@Controller('v1/partner')
export class PartnerSigningController {
  constructor(private readonly signing: PartnerSigning) {}

  @Doc(
    `Roll your signing key: a new secret (hmac-sha256) or key pair (ed25519), shown once; ${OVERLAP}; ${AUDITED}`,
    SigningKeyResponse,
    [400, 413],
    { idempotent: true },
  )
  @ApiBody({ type: RollSigningKeyDto, required: false, description: 'none, or an empty object' })
  @AuditAction('partner.signing-secret.rotate')
  @Post('rotate-signing-secret')
  @HttpCode(200)
  @UseInterceptors(IdempotencyInterceptor)
  rotate(@CurrentActor() actor: Actor, @CurrentPartner() p: Partner, @Body() _none: RollSigningKeyDto) {
    return this.signing.rotate(actor, p.id);
  }

  @Doc(
    `Switch your signature scheme: a new key of that scheme, shown once; ${OVERLAP}; ${AUDITED}`,
    SignatureSchemeResponse,
    [400, 413, { 409: 'you sign with that scheme already (a new key of it is rotate-signing-secret)' }],
    { idempotent: true },
  )
  @AuditAction('partner.signature-scheme.switch')
  @Post('signature-scheme')
  @HttpCode(200)
  @UseInterceptors(IdempotencyInterceptor)
  switchScheme(@CurrentActor() actor: Actor, @CurrentPartner() p: Partner, @Body() dto: SwitchSignatureSchemeDto) {
    return this.signing.switchScheme(actor, p.id, dto.scheme);
  }
}
