import { Body, Controller, Get, Patch } from '@nestjs/common';
import { ApiProperty, ApiTags } from '@nestjs/swagger';
import { IsString, ValidateIf } from 'class-validator';
import { Access } from '../../operators/index.js';
import { CALLBACK_URL, Doc, NoQuery } from '../../platform/index.js';
import { operationalEventDocs } from './operational-event-document.js';
import { CurrentPartner, Partner, PartnerProfile, PartnerResponse } from '../../partners/index.js';

export class PartnerChangeDto {
  @ApiProperty({
    ...CALLBACK_URL,
    nullable: true,
    description:
      'where operational events go: a URL checked exactly as a callback URL ' +
      "(use another origin than your callbacks'), or null to stop them",
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

  @Doc(
    'Your partner account: signature scheme and public keys, operations URL, client certificate',
    PartnerResponse,
    [],
  )
  @NoQuery()
  @Get()
  get(@CurrentPartner() p: Partner) {
    return this.profile.view(p.id);
  }

  @Doc(
    'Set or remove your operations URL (checked as a callback URL)',
    PartnerResponse,
    [{ 400: 'the URL is refused (the message names operationsUrl), it is missing, or another property is given' }, 413],
    { callbacks: operationalEventDocs() },
  )
  @Patch()
  change(@CurrentPartner() p: Partner, @Body() dto: PartnerChangeDto) {
    return this.profile.setOperationsUrl(p.id, dto.operationsUrl);
  }
}
