import { ApiProperty, ApiOperationOptions, getSchemaPath } from '@nestjs/swagger';
import { signedPost } from '../callback-document.js';
import { OPERATIONAL_EVENTS } from '../event-catalogue.js';
import { timestamp } from '../../platform/index.js';
import { OPERATIONAL_EVENT_TYPES, OperationalEventType } from './operational-event.js';

/** A property of an event's `data`, described as the event catalogue describes it. */
function dataProperty(type: OperationalEventType, key: string, schema: object) {
  const entry = OPERATIONAL_EVENTS.find((e) => e.type === type)!;
  return ApiProperty({ ...schema, description: entry.data[key], example: entry.example.data[key] });
}

const origin = { type: 'string' } as const;
const count = { type: 'integer', minimum: 0 } as const;

export class DestinationFailingData {
  @dataProperty('destination.failing', 'destination', origin) destination: string;
  @dataProperty('destination.failing', 'since', timestamp) since: string;
  @dataProperty('destination.failing', 'lastError', { type: 'string' }) lastError: string;
  @dataProperty('destination.failing', 'waiting', count) waiting: number;
}

export class DestinationRecoveredData {
  @dataProperty('destination.recovered', 'destination', origin) destination: string;
  @dataProperty('destination.recovered', 'failingSince', timestamp) failingSince: string;
  @dataProperty('destination.recovered', 'recoveredAt', timestamp) recoveredAt: string;
  @dataProperty('destination.recovered', 'waiting', count) waiting: number;
}

export class CallbacksFailedData {
  @dataProperty('callbacks.failed', 'destination', origin) destination: string;
  @dataProperty('callbacks.failed', 'count', { type: 'integer', minimum: 1 }) count: number;
  @dataProperty('callbacks.failed', 'from', timestamp) from: string;
  @dataProperty('callbacks.failed', 'to', timestamp) to: string;
}

/** A test event's data: none. */
export class TestEventData {}

/** The body of an operational event's POST to the partner's operationsUrl. */
export class OperationalEventBody {
  @ApiProperty({ enum: OPERATIONAL_EVENT_TYPES }) type: string;
  @ApiProperty({ ...timestamp, description: 'when it happened' }) timestamp: string;
  @ApiProperty({
    oneOf: [DestinationFailingData, DestinationRecoveredData, CallbacksFailedData, TestEventData].map((m) => ({
      $ref: getSchemaPath(m),
    })),
    description:
      'destination.failing: DestinationFailingData; destination.recovered: DestinationRecoveredData; ' +
      'callbacks.failed: CallbacksFailedData; operations.test: TestEventData (empty)',
  })
  data: DestinationFailingData | DestinationRecoveredData | CallbacksFailedData | TestEventData;
}

/** The schemas the events' POST names, for the document's components. */
export const OPERATIONAL_EVENT_MODELS = [
  OperationalEventBody,
  DestinationFailingData,
  DestinationRecoveredData,
  CallbacksFailedData,
  TestEventData,
];

/** The OpenAPI `callbacks` of the operation that sets operationsUrl: the events' POST. */
export function operationalEventDocs(): ApiOperationOptions['callbacks'] {
  const whens = OPERATIONAL_EVENTS.map((e) => `${e.type}: ${e.when}`).join('; ');
  const post = signedPost({
    summary: `POST to operationsUrl: an operational event (${OPERATIONAL_EVENTS.map((e) => e.type).join(', ')})`,
    body:
      `the body is {"type","timestamp","data"} (OperationalEventBody). ${whens}. ` +
      'webhook-id is the event\'s id in GET /v1/partner/events (docs/partners.md, "Operational events").',
    schema: OperationalEventBody.name,
    examples: Object.fromEntries(OPERATIONAL_EVENTS.map((e) => [e.type, { summary: e.when, value: e.example }])),
  });
  return { operationsUrl: { '{$request.body#/operationsUrl}': post } } as ApiOperationOptions['callbacks'];
}
