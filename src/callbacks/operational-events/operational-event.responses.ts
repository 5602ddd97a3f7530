import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { nullableTimestamp, PageCursor, PageLimit, timestamp, uuid } from '../../platform/index.js';
import { OPERATIONAL_EVENT_TYPES } from './operational-event.js';

export class ListEventsQuery {
  @ApiPropertyOptional({ enum: OPERATIONAL_EVENT_TYPES })
  @IsOptional()
  @IsIn(OPERATIONAL_EVENT_TYPES)
  type?: string;

  @PageLimit()
  limit?: number;

  @PageCursor()
  cursor?: string;
}

export class OperationalEventResponse {
  @ApiProperty({ ...uuid, description: 'also the webhook-id of its delivery' }) id: string;
  @ApiProperty({ enum: OPERATIONAL_EVENT_TYPES }) type: string;
  @ApiProperty(timestamp) timestamp: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'destination.failing: {destination, since, lastError, waiting}; ' +
      'destination.recovered: {destination, failingSince, recoveredAt, waiting}; ' +
      'callbacks.failed: {destination, count, from, to} (docs/partners.md, "Operational events")',
  })
  data: Record<string, unknown>;
  @ApiProperty({
    enum: ['pending', 'delivered', 'failed', 'not_sent'],
    description: 'its delivery to the operationsUrl; not_sent: none was set when it happened',
  })
  status: string;
  @ApiProperty({ type: 'integer', minimum: 0 }) attemptCount: number;
  @ApiProperty({ type: 'string', nullable: true }) lastError: string | null;
  @ApiProperty(nullableTimestamp) deliveredAt: string | null;
}

export class OperationalEventPageResponse {
  @ApiProperty({ type: [OperationalEventResponse] }) items: OperationalEventResponse[];
  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'pass as cursor for the next (older) page; null on the last',
  })
  nextCursor: string | null;
}
