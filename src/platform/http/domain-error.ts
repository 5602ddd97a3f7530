import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ErrorCode } from './error-codes.js';

/** What kind of refusal; the one place that maps kinds to HTTP statuses is the filter below. */
export type DomainErrorKind = 'invalid' | 'not_found' | 'conflict' | 'rule' | 'rate';

const STATUS: Record<DomainErrorKind, [number, string]> = {
  invalid: [400, 'Bad Request'],
  not_found: [404, 'Not Found'],
  conflict: [409, 'Conflict'],
  rule: [422, 'Unprocessable Entity'],
  rate: [429, 'Too Many Requests'],
};

/** A refusal by a business rule, with its stable code (http/error-codes.ts). */
export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    readonly code: ErrorCode,
    message: string,
    /** Seconds for the Retry-After header (a `rate` refusal). */
    readonly retryAfterS?: number,
  ) {
    super(message);
  }
}

/** The HTTP status a refusal is answered with (for pages that answer it themselves: the portal's). */
export const statusOf = (error: DomainError): number => STATUS[error.kind][0];

export const notFound = (what: string) => new DomainError('not_found', ErrorCode.not_found, `${what} not found`);

/** 409: other requests changed the resource after each of a change's `reads` reads of it; nothing was written. */
export const overtaken = (what: string, reads: number) =>
  new DomainError(
    'conflict',
    ErrorCode.concurrent_changes,
    `${what} was changed by another request after each of this change's ${reads} reads; nothing was written, try again`,
  );

/** 400 in the validation shape (`message` is a list), naming the property. */
export const invalidProperty = (message: string) => new DomainError('invalid', ErrorCode.invalid_request, message);

/** A refusal as its answer, in the one error shape (the filter below, and handlers outside Nest's: the dashboard's). */
export function sendDomainError(error: DomainError, reply: FastifyReply): FastifyReply {
  const [statusCode, name] = STATUS[error.kind];
  const message = error.kind === 'invalid' ? [error.message] : error.message;
  if (error.retryAfterS !== undefined) reply.header('Retry-After', String(error.retryAfterS));
  return reply.status(statusCode).send({ statusCode, error: name, message, code: error.code });
}

@Catch(DomainError)
export class DomainErrorFilter implements ExceptionFilter {
  catch(error: DomainError, host: ArgumentsHost): void {
    sendDomainError(error, host.switchToHttp().getResponse<FastifyReply>());
  }
}
