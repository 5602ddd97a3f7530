import { ArgumentsHost, Catch, HttpException, Logger } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import type { FastifyReply } from 'fastify';
import { DomainError, DomainErrorFilter } from './domain-error.js';
import { ErrorCode } from './error-codes.js';
import { frameworkRefusal, sendHttpException } from './framework-errors.js';
import { redactSecrets } from '../logging/redacting-logger.js';
import { RepeatLimitedLog } from '../logging/repeat-limited-log.js';

/** Seconds a client is asked to wait before retrying while PostgreSQL cannot be reached. */
export const UNAVAILABLE_RETRY_AFTER_S = 2;

/**
 * PostgreSQL out of reach rather than a fault of ours: connection refused, reset or lost, the
 * server shutting down or starting up, no connection slot left (SQLSTATE classes 08 and 57P,
 * 53300), directly or as a TypeORM QueryFailedError's driver error.
 */
export function isDatabaseUnavailable(e: Error): boolean {
  const driver = (e as { driverError?: unknown }).driverError;
  const code = (e as { code?: unknown }).code ?? (driver as { code?: unknown } | undefined)?.code;
  if (
    typeof code === 'string' &&
    (/^(08|57P0[1-3])/.test(code) ||
      code === '53300' ||
      ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE'].includes(code))
  )
    return true;
  return /^(Connection terminated|timeout exceeded when trying to connect)/.test(e.message);
}

/**
 * What was thrown, as an Error. An error made in another realm is one already, with its code: Node's
 * own socket errors (`read ECONNRESET` from a raw pg query) fail `instanceof Error` inside a vm
 * sandbox, as the app runs in jest's e2e tests.
 */
export function asError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  if (typeof thrown === 'object' && thrown !== null && typeof (thrown as { message?: unknown }).message === 'string')
    return thrown as Error;
  return new Error(String(thrown));
}

/**
 * An unexpected error as an answer: a 500 in the one error shape (a 503 with Retry-After while
 * PostgreSQL cannot be reached), and one log line with the error's class and message only. Nest's
 * default logs the error object itself, and a TypeORM QueryFailedError carries the query's
 * parameters (a partner insert's signing secret among them). Used by the filter below and by the
 * access gate, which answers before any route's handler (src/operators/access/access-gate.ts).
 */
export class UnexpectedErrorAnswer {
  private readonly log = new Logger('UnexpectedError');
  /** An outage fails every request alike: once in a while is enough. */
  private readonly outage = new RepeatLimitedLog((m) => this.log.warn(m));

  send(error: unknown, reply: FastifyReply): void {
    const e = asError(error);
    const code = (e as { code?: unknown }).code;
    const what = redactSecrets(`${e.constructor.name}${typeof code === 'string' ? ` ${code}` : ''}: ${e.message}`);
    const unavailable = isDatabaseUnavailable(e);
    if (unavailable) this.outage.warn(`PostgreSQL cannot be reached, answering 503: ${what}`);
    else this.log.error(what);
    if (reply.sent || reply.raw.headersSent) return void reply.raw.end();
    if (unavailable) {
      reply.header('Retry-After', String(UNAVAILABLE_RETRY_AFTER_S)).status(503).send({
        statusCode: 503,
        error: 'Service Unavailable',
        message: 'the database cannot be reached; retry later',
        code: ErrorCode.database_unavailable,
      });
      return;
    }
    reply.status(500).send({
      statusCode: 500,
      error: 'Internal Server Error',
      message: 'Internal server error',
      code: ErrorCode.internal_error,
    });
  }
}

/** Everything not already an HTTP answer, as {@link UnexpectedErrorAnswer} says. */
@Catch()
export class UnexpectedErrorFilter extends BaseExceptionFilter {
  private readonly unexpected = new UnexpectedErrorAnswer();
  private readonly domain = new DomainErrorFilter();

  catch(error: unknown, host: ArgumentsHost): void {
    if (error instanceof DomainError) return this.domain.catch(error, host);
    // Nest hands Fastify's own 4xx refusals (reading a body) over as HttpExceptions caused by them.
    if (error instanceof HttpException)
      return sendHttpException(frameworkRefusal(error.cause) ?? error, host.switchToHttp().getResponse<FastifyReply>());
    this.unexpected.send(error, host.switchToHttp().getResponse<FastifyReply>());
  }
}
