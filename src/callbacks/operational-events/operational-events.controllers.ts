import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Access } from '../../operators/index.js';
import { Doc, ParseUuid } from '../../platform/index.js';
import { CurrentPartner, Partner } from '../../partners/index.js';
import { ListEventsQuery, OperationalEventPageResponse } from './operational-event.responses.js';
import { OperationalEvents } from './operational-events.service.js';

@ApiTags('partner')
@Access.partner()
@Controller('v1/partner/events')
export class PartnerEventsController {
  constructor(private readonly events: OperationalEvents) {}

  @Doc(
    'Your operational events, newest first: your receivers\' trouble (docs/partners.md, "Operational events")',
    OperationalEventPageResponse,
    [400],
  )
  @Get()
  list(@CurrentPartner() partner: Partner, @Query() q: ListEventsQuery) {
    return this.events.list(partner.id, { ...q, limit: q.limit ?? 50 });
  }
}

@ApiTags('operator')
@Controller('admin/v1/partners/:partnerId/events')
export class PartnerEventsAdminController {
  constructor(private readonly events: OperationalEvents) {}

  @Doc("A partner's operational events, newest first", OperationalEventPageResponse, [400, 404])
  @Access.operator('viewer')
  @Get()
  list(@Param('partnerId', ParseUuid) partnerId: string, @Query() q: ListEventsQuery) {
    return this.events.listOfPartner(partnerId, { ...q, limit: q.limit ?? 50 });
  }
}
