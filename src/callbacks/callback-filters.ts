import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsOptional, IsString, IsUUID, Matches, Max, MaxLength, Min } from 'class-validator';
import { PageCursor, PageLimit, QueryInt } from '../platform/index.js';
import { callbackOrigin } from './callback-destination.js';
import { CallbackMessage } from './callback-message.js';
import { SHOWN_STATUSES, ShownStatus } from './callback-status.js';

const ORIGIN = /^https?:\/\/[^\s/?#@\\]+$/i;

/**
 * A field holding a callback URL's origin (scheme, host, port; no path), normalised as
 * callback-destination.ts computes it, so `https://Hooks.Example.com:443` is `https://hooks.example.com`.
 * A URL with a path is refused rather than cut down: a filter that silently widened would surprise.
 * Callback filters (`destination`), the operators' destination list (`origin`) and their probe share it.
 */
export const OriginField = (field: string, description: string, required: 'required' | 'optional' = 'optional') =>
  applyDecorators(
    Matches(ORIGIN, {
      message:
        `${field} must be a callback URL's origin: scheme, host and port, without a path, ` +
        'e.g. https://hooks.example.com',
    }),
    MaxLength(2048),
    IsString(),
    Transform(({ value }: { value: unknown }) =>
      typeof value === 'string' && ORIGIN.test(value) ? callbackOrigin(value) : value,
    ),
    ...(required === 'required'
      ? [ApiProperty({ example: 'https://hooks.example.com', maxLength: 2048, description })]
      : [IsOptional(), ApiPropertyOptional({ example: 'https://hooks.example.com', maxLength: 2048, description })]),
  );

/** `destination`: only callbacks whose URL has this origin. */
export const DestinationOrigin = () =>
  OriginField('destination', 'only callbacks whose URL has this origin (scheme, host, port)');

export class ListCallbacksQuery {
  @ApiPropertyOptional({ enum: SHOWN_STATUSES })
  @IsOptional()
  @IsIn(SHOWN_STATUSES)
  status?: ShownStatus;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID()
  companyId?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 4 })
  @IsOptional()
  @QueryInt()
  @IsInt()
  @Min(0)
  @Max(4)
  message?: CallbackMessage;

  @PageLimit()
  limit?: number;

  @PageCursor()
  cursor?: string;
}

/** The operators' list: every partner's callbacks, narrowed to one partner or one destination origin too. */
export class AdminListCallbacksQuery extends ListCallbacksQuery {
  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID()
  partnerId?: string;

  @DestinationOrigin()
  destination?: string;
}

const TIME = { format: 'date-time', example: '2026-11-22T00:00:00Z' } as const;

/** A partner's bulk redelivery: its failed callbacks created in [since, until), at one origin. */
export class ReplayFailedDto {
  @ApiProperty({ enum: ['failed'], description: 'only failed callbacks are redelivered in bulk' })
  @IsIn(['failed'])
  status: 'failed';

  @ApiPropertyOptional({ ...TIME, description: 'only callbacks created at or after this time' })
  @IsOptional()
  @IsISO8601({ strict: true })
  since?: string;

  @ApiPropertyOptional({ ...TIME, description: 'only callbacks created before this time (later than since)' })
  @IsOptional()
  @IsISO8601({ strict: true })
  until?: string;

  @DestinationOrigin()
  destination?: string;
}

/** An operator's: over every partner, or one partner's, or one company's. */
export class AdminReplayFailedDto extends ReplayFailedDto {
  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID()
  partnerId?: string;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID()
  companyId?: string;
}

/** A bulk redelivery's window as the service takes it. */
export const replayWindow = (dto: ReplayFailedDto) => ({
  since: dto.since === undefined ? undefined : new Date(dto.since),
  until: dto.until === undefined ? undefined : new Date(dto.until),
  destination: dto.destination,
});
