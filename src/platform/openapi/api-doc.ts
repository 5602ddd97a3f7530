import { applyDecorators, Type } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiOperationOptions, ApiResponse } from '@nestjs/swagger';
import { ErrorResponse } from '../http/error-response.js';

// The OpenAPI document's building blocks, so that every route says the same thing the same way:
// `@Access` (src/operators/access/route-access.ts) on a controller or route, `@Doc(...)` on each
// route, `@ApiErrors(...)` for answers a route adds. The end-to-end tests validate every response against the document,
// so an answer that is not declared here fails them.

/** Names of the security schemes (see `securitySchemes` below). */
export const SECURITY = {
  partner: 'partnerApiKey',
  operator: 'operatorToken',
  operatorBasic: 'operatorBasic',
} as const;

/** The real credentials: opaque Bearer tokens (not JWTs), and Basic for the queue dashboard. */
export const securitySchemes = {
  [SECURITY.partner]: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'API key',
    description:
      "A partner's apiKey, shown once when an operator creates the partner: `Authorization: Bearer <apiKey>`.",
  },
  [SECURITY.operator]: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'operator token',
    description:
      "An operator's token (POST /admin/v1/operators shows it once), or the deployment's ADMIN_TOKEN " +
      '(the bootstrap operator `admin`, role admin): `Authorization: Bearer <token>`. ' +
      'Each route needs a role (its `x-required-role`): viewer reads, operator also changes, ' +
      'admin also manages partners and operators.',
  },
  [SECURITY.operatorBasic]: {
    type: 'http',
    scheme: 'basic',
    description:
      "The queue dashboard only (a browser prompts for it): the operator's name and token " +
      '(`admin` and ADMIN_TOKEN for the bootstrap operator).',
  },
} as const;

export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 422 | 429 | 503;

const ERRORS: Record<ErrorStatus, string> = {
  400: 'invalid body, query, header or id (a malformed id included); the message names the field',
  401: 'missing or invalid credentials',
  403: 'a known operator whose role does not allow this (the only 403: the caller is known)',
  404: 'unknown id, or a resource of another partner',
  409: 'not allowed from the current status (the message names it)',
  413: 'body over 64 KiB',
  422: 'a business rule refuses it',
  429: 'more than the partner rate limit; retry after Retry-After seconds',
  503: 'the service cannot reach its database; retry after Retry-After seconds',
};

const RETRY_AFTER = {
  'Retry-After': {
    description: 'seconds to wait before retrying',
    required: true,
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
};

/**
 * Error answers of a route, each in the one error shape. A description replaces the generic one
 * where the route knows why it answers so (`{ 422: 'amount exceeds the credit balance' }`).
 */
export function ApiErrors(...codes: (ErrorStatus | Partial<Record<ErrorStatus, string>>)[]) {
  const described = new Map<ErrorStatus, string>();
  for (const c of codes) {
    if (typeof c === 'number') described.set(c, described.get(c) ?? ERRORS[c]);
    else for (const [k, why] of Object.entries(c)) described.set(Number(k) as ErrorStatus, why);
  }
  return applyDecorators(
    ...[...described].map(([status, description]) =>
      ApiResponse({
        status,
        type: ErrorResponse,
        description,
        ...(status === 429 || status === 503 ? { headers: RETRY_AFTER } : {}),
      }),
    ),
  );
}

/** One decorator per route for the OpenAPI document: summary, success schema, error answers. */
export function Doc(
  summary: string,
  type: Type<unknown> | null,
  errors: (ErrorStatus | Partial<Record<ErrorStatus, string>>)[],
  {
    status = 200,
    idempotent = false,
    callbacks,
  }: { status?: number; idempotent?: boolean; callbacks?: ApiOperationOptions['callbacks'] } = {},
) {
  return applyDecorators(
    ApiOperation({ summary, ...(callbacks ? { callbacks } : {}) }),
    ApiResponse({
      status,
      ...(type ? { type } : {}),
      description: status === 202 ? 'accepted' : 'success',
      ...(idempotent
        ? {
            headers: {
              'Idempotent-Replayed': {
                description: 'true on a replayed response',
                required: false,
                schema: { type: 'string', enum: ['true'] },
              },
            },
          }
        : {}),
    }),
    ApiErrors(...errors),
    ...(idempotent
      ? [
          ApiHeader({
            name: 'Idempotency-Key',
            required: false,
            description:
              '1–255 printable ASCII characters. The same key and body within 24 h returns the first ' +
              'response again, byte for byte (with Idempotent-Replayed: true), and creates nothing.',
            schema: {
              type: 'string',
              minLength: 1,
              maxLength: 255,
              pattern: '^[\\x21-\\x7e]([\\x20-\\x7e]*[\\x21-\\x7e])?$',
            },
          }),
          ApiErrors({
            409: also(
              errors,
              409,
              'a request with the same Idempotency-Key is still being processed (retry shortly), ' +
                'or its outcome is unknown (its response could not be stored: check, then use a new key)',
            ),
            422: also(errors, 422, 'the Idempotency-Key was already used with another body'),
          }),
        ]
      : []),
  );
}

/** The route's own reason for `status`, if it has one, and `why` too. */
function also(
  errors: (ErrorStatus | Partial<Record<ErrorStatus, string>>)[],
  status: ErrorStatus,
  why: string,
): string {
  const own = errors
    .map((e) => (typeof e === 'object' ? e[status] : e === status ? ERRORS[status] : undefined))
    .find(Boolean);
  return own ? `${own}; or ${why}` : why;
}
