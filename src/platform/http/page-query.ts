import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { QueryInt } from './validation.js';

/**
 * The two query parameters of every keyset-paged list (the audit log, the callback lists): one
 * declaration, so their bounds and their OpenAPI description cannot drift apart. The handler
 * applies the default (`limit ?? 50`). applyDecorators runs its list first to last, so each list
 * is written bottom-up: the order stacked decorators run in, which is the order a 400 lists the
 * failed constraints in.
 */

/** `limit`: a query-string integer from 1 to 200, 50 when absent. */
export const PageLimit = () =>
  applyDecorators(
    Max(200),
    Min(1),
    IsInt(),
    QueryInt(),
    IsOptional(),
    ApiPropertyOptional({ type: 'integer', default: 50, minimum: 1, maximum: 200 }),
  );

/** `cursor`: the previous page's `nextCursor`, at most 64 characters. */
export const PageCursor = () =>
  applyDecorators(
    MaxLength(64),
    IsString(),
    IsOptional(),
    ApiPropertyOptional({ description: 'nextCursor of the previous page', maxLength: 64 }),
  );
