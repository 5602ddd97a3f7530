import { ArgumentsHost, Catch, HttpException, Logger } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import type { Response } from 'express';
import { DomainError, DomainErrorFilter } from './domain-error.js';
import { redactSecrets } from './redacting-logger.js';

/**
 * Everything not already an HTTP answer: a 500 in the one error shape, and one log line with the
 * error's class and message only. Nest's default logs the error object itself, and a TypeORM
 * QueryFailedError carries the query's parameters (a partner insert's signing secret among them).
 */
@Catch()
export class UnexpectedErrorFilter extends BaseExceptionFilter {
  private readonly log = new Logger('UnexpectedError');
  private readonly domain = new DomainErrorFilter();

  catch(error: unknown, host: ArgumentsHost): void {
    if (error instanceof DomainError) return this.domain.catch(error, host);
    if (error instanceof HttpException) return super.catch(error, host);
    const e = error instanceof Error ? error : new Error(String(error));
    const code = (e as { code?: unknown }).code;
    this.log.error(redactSecrets(`${e.constructor.name}${typeof code === 'string' ? ` ${code}` : ''}: ${e.message}`));
    const res = host.switchToHttp().getResponse<Response>();
    if (res.headersSent) return void res.end();
    res.status(500).json({ statusCode: 500, error: 'Internal Server Error', message: 'Internal server error' });
  }
}
