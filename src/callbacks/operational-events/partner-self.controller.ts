import { Body, Controller, Get, Patch } from '@nestjs/common';
import { ApiProperty, ApiTags } from '@nestjs/swagger';
import { IsString, ValidateIf } from 'class-validator';
import { Access } from '../../operators/access/route-access.js';
import { Doc } from '../../platform/openapi/api-doc.js';
import { NoQuery } from '../../platform/http/strict-params.js';
import { CALLBACK_URL } from '../../platform/openapi/schema.js';
import { operationalEventDocs } from './operational-event-document.js';
import { CurrentPartner } from '../../partners/current-partner.js';
import { Partner } from '../../partners/partner.entity.js';
import { PartnerProfile } from '../../partners/partner-profile.js';
import { PartnerResponse } from '../../partners/partner-responses.js';

export class PartnerChangeDto {
  @ApiProperty({
    ...CALLBACK_URL,
    nullable: true,
    description: 'where operational events go: a URL checked exactly as a callback URL (use another origin than your callbacks\'), or null to stop them',
  })
  // Required, and null is its value for "none": an absent property would change nothing.
  @ValidateIf((o: PartnerChangeDto) => o.operationsUrl !== null)
  @IsString({ message: 'operationsUrl must be a URL, or null to remove it' })
  operationsUrl: string | null;
}

@ApiTags('partner')
@Access.partner()
@Controller('v1/partner')
export class PartnerSelfController {
  constructor(private readonly profile: PartnerProfile) {}

  @Doc('Your partner account: signature scheme and public keys, operations URL, client certificate', PartnerResponse, [])
  @NoQuery()
  @Get()
  get(@CurrentPartner() p: Partner) {
    return this.profile.view(p.id);
  }

  @Doc('Set or remove your operations URL (checked as a callback URL)', PartnerResponse, [
    { 400: 'the URL is refused (the message names operationsUrl), it is missing, or another property is given' },
    413,
  ], { callbacks: operationalEventDocs() })
  @Patch()
  change(@CurrentPartner() p: Partner, @Body() dto: PartnerChangeDto) {
    return this.profile.setOperationsUrl(p.id, dto.operationsUrl);
  }
}
