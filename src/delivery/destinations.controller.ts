import { Body, Controller, Get, HttpCode, Post, Query, UseGuards } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { ApiOperator, ApiPartner, Doc } from '../common/api-doc.js';
import { AdminGuard, CurrentPartner, PartnerGuard } from '../partners/auth.guards.js';
import { Partner } from '../partners/partner.entity.js';
import type { DestinationState } from './destination-gate.js';
import { DestinationsService } from './destinations.service.js';

const STATES = ['closed', 'open', 'half_open'];

export class DestinationResponse {
  @ApiProperty({ example: 'https://hooks.example.com', description: "a callback URL's origin (scheme, host, port): never a path or query" })
  origin: string;
  @ApiProperty({ enum: STATES }) state: DestinationState;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'consecutive failed attempts (timeout, network error, 5xx, 429)' }) consecutiveFailures: number;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) openedAt: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'when the next probe goes (open circuit)' }) nextProbeAt: string | null;
  @ApiProperty({ type: 'string', nullable: true }) lastError: string | null;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'callbacks waiting for this destination (no free slot, or the circuit open)' }) waiting: number;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'requests under way to it, with callbacks handed a slot on their way from waiting and slots a worker keeps for its next callbacks (idle up to 20 ms)' }) inFlight: number;
}

export class DestinationListResponse {
  @ApiProperty({ type: [DestinationResponse] }) items: DestinationResponse[];
}

export class ListDestinationsQuery {
  @ApiPropertyOptional({ enum: STATES })
  @IsOptional()
  @IsIn(STATES)
  state?: DestinationState;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID()
  partnerId?: string;
}

export class ProbeDestinationDto {
  @ApiProperty({ example: 'https://hooks.example.com' })
  @IsString()
  @MaxLength(2048)
  origin: string;
}

@ApiTags('operator: destinations')
@ApiOperator()
@UseGuards(AdminGuard)
@Controller('admin/v1/destinations')
export class DestinationsAdminController {
  constructor(private readonly destinations: DestinationsService) {}

  @Doc('Destinations (callback URL origins) with their circuit state, waiting and in-flight callbacks', DestinationListResponse, [400])
  @Get()
  async list(@Query() q: ListDestinationsQuery) {
    return { items: await this.destinations.list(q) };
  }

  /** Probes an open destination within a second instead of at its next probe time. */
  @Doc('Probe an open destination now', null, [400, { 404: 'no destination with this origin', 409: 'the destination is not open' }, 413], { status: 202 })
  @Post('probe')
  @HttpCode(202)
  async probe(@Body() dto: ProbeDestinationDto): Promise<void> {
    await this.destinations.probe(dto.origin);
  }
}

@ApiTags('callbacks')
@ApiPartner()
@UseGuards(PartnerGuard)
@Controller('v1/callbacks/destinations')
export class PartnerDestinationsController {
  constructor(private readonly destinations: DestinationsService) {}

  @Doc("The partner's destinations: circuit state, and its own waiting and in-flight callbacks", DestinationListResponse, [])
  @Get()
  async list(@CurrentPartner() partner: Partner) {
    return { items: await this.destinations.listForPartner(partner.id) };
  }
}
