import { ApiProperty, ApiOperationOptions, getSchemaPath } from '@nestjs/swagger';
import { signedPost } from '../callback-document.js';
import { timestamp } from '../../platform/index.js';
import { OPERATIONAL_EVENT_TYPES } from './operational-event.js';

const destination = { type: 'string', description: "the destination's origin (scheme, host and port of its callback URLs)", example: 'https://hooks.example.com' } as const;
const waiting = { type: 'integer', minimum: 0, description: "your callbacks waiting for it at that moment (counted among 1000 of its waiting callbacks; at that cap: at least that many)" } as const;

export class DestinationFailingData {
  @ApiProperty(destination) destination: string;
  @ApiProperty({ ...timestamp, description: 'when its circuit opened' }) since: string;
  @ApiProperty({ type: 'string', description: 'the last failed attempt, as in the delivery log', example: 'HTTP 503' }) lastError: string;
  @ApiProperty(waiting) waiting: number;
}

export class DestinationRecoveredData {
  @ApiProperty(destination) destination: string;
  @ApiProperty({ ...timestamp, description: 'when its circuit had opened (the since of its destination.failing)' }) failingSince: string;
  @ApiProperty({ ...timestamp, description: 'when a probe was answered and its circuit closed' }) recoveredAt: string;
  @ApiProperty(waiting) waiting: number;
}

export class CallbacksFailedData {
  @ApiProperty(destination) destination: string;
  @ApiProperty({ type: 'integer', minimum: 1, description: 'callbacks that became failed (after their last attempt, or their outage) between from and to' }) count: number;
  @ApiProperty({ ...timestamp, description: 'the first of them failed' }) from: string;
  @ApiProperty({ ...timestamp, description: 'the last of them failed' }) to: string;
}

/** The body of an operational event's POST to the partner's operationsUrl. */
export class OperationalEventBody {
  @ApiProperty({ enum: OPERATIONAL_EVENT_TYPES }) type: string;
  @ApiProperty({ ...timestamp, description: 'when it happened' }) timestamp: string;
  @ApiProperty({
    oneOf: [DestinationFailingData, DestinationRecoveredData, CallbacksFailedData].map((m) => ({ $ref: getSchemaPath(m) })),
    description: 'destination.failing: DestinationFailingData; destination.recovered: DestinationRecoveredData; callbacks.failed: CallbacksFailedData',
  })
  data: DestinationFailingData | DestinationRecoveredData | CallbacksFailedData;
}

/** The schemas the events' POST names, for the document's components. */
export const OPERATIONAL_EVENT_MODELS = [OperationalEventBody, DestinationFailingData, DestinationRecoveredData, CallbacksFailedData];

/** The OpenAPI `callbacks` of the operation that sets operationsUrl: the events' POST. */
export function operationalEventDocs(): ApiOperationOptions['callbacks'] {
  const post = signedPost({
    summary: 'POST to operationsUrl: an operational event (destination.failing, destination.recovered, callbacks.failed)',
    body:
      'the body is {"type","timestamp","data"} (OperationalEventBody): one of your receivers failing, recovering, or callbacks failed for good ' +
      '(docs/partners.md, "Operational events"); webhook-id is the event\'s id in GET /v1/partner/events.',
    schema: OperationalEventBody.name,
  });
  return { operationsUrl: { '{$request.body#/operationsUrl}': post } } as ApiOperationOptions['callbacks'];
}
