import { ApiProperty } from '@nestjs/swagger';

export class ErrorResponse {
  @ApiProperty({ type: 'integer', example: 409 }) statusCode: number;
  @ApiProperty({ example: 'Conflict' }) error: string;
  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
    example: 'Withdrawal request cannot become accepted: its current status is paid_out',
    description: 'a list of messages for validation errors (400), one message otherwise',
  })
  message: string | string[];
}
