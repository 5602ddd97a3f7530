import { Body, Controller, Delete, HttpCode, Param, Post } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { Access, Actor, AuditAction, CurrentActor } from '../operators/index.js';
import { Doc, IsOmittable, ParseUuid, timestamp } from '../platform/index.js';
import { CurrentPartner } from './current-partner.js';
import { Partner } from './partner.entity.js';
import { DEFAULT_PORTAL_LINK_MINUTES, PortalLinks } from './portal-links.js';

export class PortalLinkDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 60,
    default: DEFAULT_PORTAL_LINK_MINUTES,
    description: 'minutes the link can be followed (once)',
  })
  @IsOmittable()
  @IsInt()
  @Min(1)
  @Max(60)
  ttlMinutes?: number;
}

export class PortalLinkResponse {
  @ApiProperty({
    description:
      '<PORTAL_BASE_URL>/portal/login?token=…: in a browser, a page naming the partner whose Sign in ' +
      'button uses the link, once, before expiresAt (opening it uses nothing). The token is a ' +
      'credential: do not log or share it',
    example: 'https://portal.example.com/portal/login?token=fsp_…',
  })
  url: string;
  @ApiProperty(timestamp) expiresAt: string;
}

const LINK_SUMMARY = 'A one-time sign-in link to the partner portal (docs/partners.md, "The portal")';

@ApiTags('partner')
@Access.partner()
@Controller('v1/partner/portal-links')
export class PartnerPortalLinksController {
  constructor(private readonly links: PortalLinks) {}

  @Doc(`${LINK_SUMMARY}: no API key in the browser`, PortalLinkResponse, [400, 413], { status: 201 })
  @Post()
  create(@CurrentPartner() p: Partner, @Body() dto: PortalLinkDto) {
    return this.links.create(p.id, dto?.ttlMinutes ?? DEFAULT_PORTAL_LINK_MINUTES);
  }
}

@ApiTags('operator')
@Controller('admin/v1/partners/:partnerId')
export class PortalAdminController {
  constructor(private readonly links: PortalLinks) {}

  @Doc(`${LINK_SUMMARY}, made for the partner`, PortalLinkResponse, [400, 404, 413], { status: 201 })
  @Access.operator('operator')
  @AuditAction('partner.portal-link.create')
  @Post('portal-links')
  createFor(@CurrentActor() actor: Actor, @Param('partnerId', ParseUuid) id: string, @Body() dto: PortalLinkDto) {
    return this.links.createAs(actor, id, dto?.ttlMinutes ?? DEFAULT_PORTAL_LINK_MINUTES);
  }

  @Doc(
    'End every portal session of the partner (the next request of each answers 401) and every ' +
      'portal link of it not yet used',
    null,
    [400, 404],
    { status: 204 },
  )
  @Access.operator('operator')
  @AuditAction('partner.portal-sessions.end')
  @Delete('portal-sessions')
  @HttpCode(204)
  async endSessions(@CurrentActor() actor: Actor, @Param('partnerId', ParseUuid) id: string): Promise<void> {
    await this.links.endSessionsAs(actor, id);
  }
}
