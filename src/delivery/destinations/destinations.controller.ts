import { Access, Actor, AuditAction, CurrentActor } from '../../operators/index.js';
import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsIn, IsOptional, IsUUID } from 'class-validator';
import { OriginField } from '../../callbacks/index.js';
import { Doc, NoQuery } from '../../platform/index.js';
import { CurrentPartner, Partner } from '../../partners/index.js';
import { CircuitState, DestinationsService } from './destinations.service.js';

const STATES = ['closed', 'open', 'half_open'];

export class DestinationResponse {
  @ApiProperty({
    format: 'uuid',
    description:
      'the partner whose destination this is: each partner has its own at an origin, with its own window and circuit',
  })
  partnerId: string;
  @ApiProperty({
    example: 'https://hooks.example.com',
    description: "a callback URL's origin (scheme, host, port): never a path or query",
  })
  origin: string;
  @ApiProperty({
    enum: STATES,
    description:
      'closed: delivering within its window; open: its callbacks wait and one probe goes at nextProbeAt; ' +
      'half_open: its probe is in flight, or due or asked for (a redelivery) with none in flight: ' +
      'its next callback, fresh or redelivered, is the probe',
  })
  state: CircuitState;
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'consecutive failed attempts (timeout, network error, 5xx, 429)',
  })
  consecutiveFailures: number;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) openedAt: string | null;
  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description:
      'when the next probe goes (open circuit): never a time already past; ' +
      'while half_open, the time of this read (now)',
  })
  nextProbeAt: string | null;
  @ApiProperty({ type: 'string', nullable: true }) lastError: string | null;
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description:
      'callbacks due and waiting for this destination (no room in its window, or the circuit open), ' +
      'counted up to 10,000',
  })
  waiting: number;
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'callbacks admitted to a worker for it: at most its window, one probe while the circuit is open',
  })
  inFlight: number;
}

export class DestinationListResponse {
  @ApiProperty({ type: [DestinationResponse] }) items: DestinationResponse[];
}

export class ListDestinationsQuery {
  @ApiPropertyOptional({ enum: STATES })
  @IsOptional()
  @IsIn(STATES)
  state?: CircuitState;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID()
  partnerId?: string;

  @OriginField('origin', "only the destinations at this origin (every partner's)")
  origin?: string;
}

export class ProbeDestinationDto {
  @OriginField('origin', 'the origin whose open destinations to probe (scheme, host, port)', 'required')
  origin: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description: "only this partner's destination at the origin; without it, every partner's open destination there",
  })
  @IsOptional()
  @IsUUID()
  partnerId?: string;
}

@ApiTags('operator: destinations')
@Controller('admin/v1/destinations')
export class DestinationsAdminController {
  constructor(private readonly destinations: DestinationsService) {}

  @Doc(
    "Destinations (each a partner's callback URL origin) with their circuit state, waiting and in-flight callbacks",
    DestinationListResponse,
    [400],
  )
  @Access.operator('viewer')
  @Get()
  async list(@Query() q: ListDestinationsQuery) {
    return { items: await this.destinations.list(q) };
  }

  /** Probes open destinations within a second instead of at their next probe time. */
  @Doc(
    "Probe an open destination now (without partnerId: every partner's open destination at the origin): " +
      'its oldest waiting callback is sent within a second; one with nothing waiting becomes half_open ' +
      '(its next callback is the probe). The items are the destinations brought forward',
    DestinationListResponse,
    [
      400,
      {
        404: 'no destination with this origin (of this partner)',
        409: 'no destination at this origin (of this partner) is open',
      },
      413,
    ],
    { status: 202 },
  )
  @Access.operator('operator')
  @AuditAction('destination.probe')
  @Post('probe')
  @HttpCode(202)
  async probe(@CurrentActor() actor: Actor, @Body() dto: ProbeDestinationDto) {
    return { items: await this.destinations.probe(actor, dto.origin, dto.partnerId ?? null) };
  }
}

@ApiTags('callbacks')
@Access.partner()
@Controller('v1/callbacks/destinations')
export class PartnerDestinationsController {
  constructor(private readonly destinations: DestinationsService) {}

  @Doc(
    "The partner's destinations: circuit state, and its own waiting and in-flight callbacks",
    DestinationListResponse,
    [],
  )
  @NoQuery()
  @Get()
  async list(@CurrentPartner() partner: Partner) {
    return { items: await this.destinations.listForPartner(partner.id) };
  }
}
