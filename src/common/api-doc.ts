import { applyDecorators, Type } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiResponse } from '@nestjs/swagger';
import { ErrorResponse } from './responses.js';

const ERRORS: Record<number, string> = {
  400: 'invalid body, query or id; the message names the field',
  401: 'missing or invalid credentials',
  404: 'unknown id, or a resource of another partner',
  409: 'the transition is not allowed from the current status (the message names it)',
  413: 'body over 64 KiB',
  422: 'a business rule refuses it (credit not active, insufficient credit balance, overpayment, Idempotency-Key reused with another body)',
};

/** One decorator per route for the OpenAPI document: summary, success schema, error answers. */
export function Doc(
  summary: string,
  type: Type<unknown> | null,
  errors: number[],
  { status = 200, idempotent = false }: { status?: number; idempotent?: boolean } = {},
) {
  return applyDecorators(
    ApiOperation({ summary }),
    ApiResponse({ status, ...(type ? { type } : {}), description: status === 202 ? 'accepted' : 'success' }),
    ...errors.map((code) => ApiResponse({ status: code, type: ErrorResponse, description: ERRORS[code] })),
    ...(idempotent
      ? [
          ApiHeader({
            name: 'Idempotency-Key',
            required: false,
            description:
              '1–255 characters. The same partner, key and body within 24 h returns the first response again (with Idempotent-Replayed: true) and creates nothing; the same key with another body → 422.',
          }),
        ]
      : []),
  );
}
