import { ApiProperty } from '@nestjs/swagger';
import { CallbackMessage } from './callback-message.js';
import { CALLBACK_MESSAGES } from './event-catalogue.js';
import { nullableTimestamp, nullableUuid, timestamp, uuid } from '../platform/index.js';

const MESSAGE_NAMES = Object.values(CallbackMessage).filter((v) => typeof v === 'string');

export class CallbackAttemptResponse {
  @ApiProperty({ type: 'integer', minimum: 1 }) number: number;
  @ApiProperty(timestamp) startedAt: string;
  @ApiProperty({ type: 'integer', minimum: 0 }) durationMs: number;
  @ApiProperty({ nullable: true, type: 'integer', description: 'null when no HTTP answer came' }) statusCode:
    number | null;
  @ApiProperty({ nullable: true, type: 'string', example: 'timeout: no answer within 15000 ms' }) error: string | null;
  @ApiProperty({ nullable: true, type: 'string', description: 'first 1 KiB' }) responseBody: string | null;
  @ApiProperty({ nullable: true, type: 'string', example: '20.93.102.228' }) sourceAddress: string | null;
}

export class CallbackBody {
  @ApiProperty({
    type: 'integer',
    enum: CALLBACK_MESSAGES.map((e) => e.code),
    description: CALLBACK_MESSAGES.map((e) => `${e.code} ${e.name}`).join(', '),
  })
  message: number;
  @ApiProperty(nullableUuid) withdrawalId: string | null;
  @ApiProperty(uuid) companyId: string;
  @ApiProperty(nullableUuid) limitRequestId: string | null;
  @ApiProperty(nullableUuid) loanId: string | null;
}

export class CallbackMessageResponse {
  @ApiProperty({ ...uuid, description: 'also the webhook-id header' }) id: string;
  @ApiProperty({ type: 'integer', enum: [0, 1, 2, 3, 4] }) message: number;
  @ApiProperty({ enum: MESSAGE_NAMES, example: 'CreditLimitUpdated' }) name: string;
  @ApiProperty({ type: 'string', format: 'uri' }) url: string;
  @ApiProperty({ type: CallbackBody }) body: CallbackBody;
  @ApiProperty({
    enum: ['pending', 'delivered', 'failed'],
    description:
      'pending: on its way — due at nextAttemptAt, waiting for room at its destination ' +
      '(or for an open circuit to close), or being sent now; ' +
      'delivered: a 2xx came back; failed: the last attempt of its schedule failed, ' +
      'the destination refused it (410, a blocked address), ' +
      "or its schedule's total passed while its destination's circuit stayed open (lastError names the outage). " +
      'A callback to a destination that is not open never fails without an attempt. ' +
      'Failed callbacks are kept and can be redelivered.',
  })
  status: string;
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description:
      'attempts made, redeliveries included ' +
      '(a failed probe of an open circuit is logged but spends none of the schedule)',
  })
  attemptCount: number;
  @ApiProperty({
    ...nullableTimestamp,
    description: 'while pending: when it is due (it goes as soon as its destination has room)',
  })
  nextAttemptAt: string | null;
  @ApiProperty({ nullable: true, type: 'string' }) lastError: string | null;
  @ApiProperty(uuid) companyId: string;
  @ApiProperty(timestamp) createdAt: string;
  @ApiProperty(nullableTimestamp) deliveredAt: string | null;
  @ApiProperty({
    type: 'boolean',
    description:
      'true for a test callback (POST /v1/callbacks/test: one attempt, not in the feed, no state changed); ' +
      'false for every real one',
  })
  test: boolean;
}

export class CallbackWithAttemptsResponse extends CallbackMessageResponse {
  @ApiProperty({ type: [CallbackAttemptResponse] }) attempts: CallbackAttemptResponse[];
}

export class CallbackPageResponse {
  @ApiProperty({ type: [CallbackMessageResponse] }) items: CallbackMessageResponse[];
  @ApiProperty({ nullable: true, type: 'string', description: 'opaque; null on the last page' }) nextCursor:
    string | null;
}

export class CallbackFeedItemResponse extends CallbackMessageResponse {
  @ApiProperty({
    type: 'string',
    pattern: '^[0-9]{1,40}$',
    example: '7560000000000000123',
    description: 'its place in the feed: opaque digits, ascending; pass it (or next) as after',
  })
  position: string;
}

export class CallbackFeedPageResponse {
  @ApiProperty({
    type: [CallbackFeedItemResponse],
    description: 'ascending position; test callbacks are never in the feed',
  })
  items: CallbackFeedItemResponse[];
  @ApiProperty({
    type: 'string',
    pattern: '^[0-9]{1,40}$',
    description: "the after of the next call: the last item's position, or the after given when nothing new",
  })
  next: string;
}

export class RedeliverCountResponse {
  @ApiProperty({ type: 'integer', minimum: 0, description: 'how many failed callbacks were sent again' }) count: number;
}

/** Why a redelivery of one callback is refused (redelivery-rules.ts), for both routes' documents. */
export const REDELIVER_REFUSALS = {
  409:
    'it is a test callback (test_callback_not_redeliverable), ' +
    'or its callback URL was removed (callback_url_removed). ' +
    'An open destination refuses nothing: the callback goes as its next probe',
} as const;

/** Why a bulk redelivery is refused. */
export const REPLAY_REFUSALS = {
  422: 'more than 100,000 failed callbacks match (replay_over_limit): nothing was done; narrow the window',
} as const;

export class SourceIpsResponse {
  @ApiProperty({ enum: ['A', 'B'] }) variant: string;
  @ApiProperty({ type: [String], example: ['20.82.192.194', '20.67.208.150', '20.105.65.222', '20.93.102.228'] })
  addresses: string[];
}
