import { BadRequestException, HttpException, PayloadTooLargeException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import { codeOfStatus } from './error-codes.js';

/**
 * Fastify's own refusals (before a route runs: reading the body, routing a malformed URL) as HTTP
 * answers in the one error shape; null for anything else. Its 4xx errors carry `statusCode` and a
 * `FST_` code; Nest's own mapping of them leaves out `error` and words the 413 its own way.
 */
export function frameworkRefusal(e: unknown): HttpException | null {
  if (!(e instanceof Error)) return null;
  const { code, statusCode } = e as { code?: unknown; statusCode?: unknown };
  if (
    typeof code !== 'string' ||
    !code.startsWith('FST_') ||
    typeof statusCode !== 'number' ||
    statusCode < 400 ||
    statusCode > 499
  )
    return null;
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new PayloadTooLargeException('Request body exceeds 64 KiB');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new BadRequestException(['Request body length does not match its Content-Length']);
    default:
      return new HttpException(
        { statusCode, error: STATUS_CODES[statusCode] ?? 'Bad Request', message: e.message },
        statusCode,
      );
  }
}

/**
 * An HTTP exception of Nest's or Fastify's (validation, a route not found, a body too large) in the
 * one error shape, with the code its status stands for (http/error-codes.ts).
 */
export function sendHttpException(e: HttpException, reply: FastifyReply): void {
  const statusCode = e.getStatus();
  const response = e.getResponse();
  const body = typeof response === 'string' ? { message: response } : (response as Record<string, unknown>);
  reply.status(statusCode).send({
    statusCode,
    error: body.error ?? STATUS_CODES[statusCode] ?? 'Error',
    message: body.message ?? e.message,
    code: body.code ?? codeOfStatus(statusCode),
  });
}

/** The first path segment that is not percent-decodable, as the router refused it. */
function undecodableSegment(url: string): string | undefined {
  return url
    .split('?')[0]
    .split('/')
    .find((segment) => {
      try {
        decodeURIComponent(segment);
        return false;
      } catch {
        return true;
      }
    });
}

/**
 * The router's own refusals (a path that is not percent-decodable), which Fastify answers before
 * any hook or error handler runs: a 400 naming the segment, in the one error shape.
 */
export function answerRouterRefusal(error: Error, req: FastifyRequest, reply: FastifyReply): void {
  const segment =
    (error as { code?: unknown }).code === 'FST_ERR_BAD_URL' ? undecodableSegment(req.raw.url ?? '') : undefined;
  const refusal =
    segment !== undefined
      ? new BadRequestException(`Failed to decode param '${segment}'`)
      : (frameworkRefusal(error) ?? new BadRequestException(error.message));
  sendHttpException(refusal, reply);
}
