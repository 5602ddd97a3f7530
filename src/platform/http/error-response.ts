import { ApiProperty } from '@nestjs/swagger';
import { ERROR_CODES } from './error-codes.js';

/** Every refusal's code with its meaning, as the OpenAPI document lists them. */
const CODES_TABLE = Object.entries(ERROR_CODES)
  .map(([code, meaning]) => `\`${code}\`: ${meaning}`)
  .join('; ');

export class ErrorResponse {
  @ApiProperty({ type: 'integer', example: 409 }) statusCode: number;
  @ApiProperty({ example: 'Conflict' }) error: string;
  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
    example: 'Withdrawal request cannot become accepted: its current status is paid_out',
    description:
      'for people: a list of messages for validation errors (400), one message otherwise; ' +
      'branch on code, never on this',
  })
  message: string | string[];
  @ApiProperty({
    enum: Object.keys(ERROR_CODES),
    example: 'status_transition_not_allowed',
    description:
      "the refusal's stable, machine-readable name: the same for the same rule on every route. " + CODES_TABLE,
  })
  code: string;
}
