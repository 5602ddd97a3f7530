import { ApiProperty } from '@nestjs/swagger';
import { IsString, MaxLength, MinLength } from 'class-validator';
import { CALLBACK_URL, nullableTimestamp } from '../../platform/index.js';
import { CALLBACK_URL_LIST_LIMIT } from './callback-url-list.service.js';
import { URL_MOVE_LIMIT } from './callback-url-move.service.js';

export class MoveCallbackUrlDto {
  @ApiProperty({
    ...CALLBACK_URL,
    description: 'a URL your resources are registered with (any property), as GET /v1/callback-urls lists it',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(2048)
  from: string;

  @ApiProperty({ ...CALLBACK_URL, description: 'the URL they take: checked as at creation (400 naming to); not from' })
  @IsString()
  to: string;
}

export class MovedResponse {
  @ApiProperty({
    type: 'integer',
    minimum: 1,
    maximum: URL_MOVE_LIMIT,
    description: 'the resources that now use to (a withdrawal request with both URLs on from counts once)',
  })
  count: number;
}

class CallbackUrlDestination {
  @ApiProperty({ type: 'string', example: 'https://hooks.example.com', description: "the URL's origin" })
  origin: string;

  @ApiProperty({ enum: ['closed', 'open', 'half_open'], description: 'its circuit (closed where none went yet)' })
  state: string;
}

export class CallbackUrlResponse {
  @ApiProperty({ ...CALLBACK_URL, description: 'as stored (normalised)' })
  url: string;

  @ApiProperty({
    type: 'integer',
    minimum: 1,
    description: 'your companies, limit requests and withdrawal requests registered with it (any property; each once)',
  })
  resources: number;

  @ApiProperty({ type: CallbackUrlDestination })
  destination: CallbackUrlDestination;

  @ApiProperty({
    ...nullableTimestamp,
    description: 'its last delivered callback (test callbacks too); null when none is kept (for CALLBACK_RETENTION)',
  })
  lastDeliveredAt: string | null;
}

const LISTED = CALLBACK_URL_LIST_LIMIT.toLocaleString('en');

export class CallbackUrlListResponse {
  @ApiProperty({
    type: [CallbackUrlResponse],
    maxItems: CALLBACK_URL_LIST_LIMIT,
    description: `the most used first (then by URL), at most ${LISTED}: one further down is unlisted, yet movable`,
  })
  items: CallbackUrlResponse[];
}
