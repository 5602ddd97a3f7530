import { BadRequestException, CallHandler, ConflictException, ExecutionContext, Injectable, NestInterceptor, UnprocessableEntityException } from '@nestjs/common';
import { HTTP_CODE_METADATA } from '@nestjs/common/constants.js';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { catchError, from, mergeMap, Observable, of } from 'rxjs';
import { DataSource } from 'typeorm';

/** Stable JSON: the same body with its keys in another order is the same request. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * Safe retries of creates (API.md §3): the first request with a key claims it (a row with no
 * response yet), runs, and stores its response; the same key and request within 24 h replays
 * it. A failed request releases the key so the client can retry it. A claim left by a crashed
 * process is taken over after five minutes.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async intercept(ctx: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const req = ctx.switchToHttp().getRequest<Request & { partner?: { id: string } }>();
    const res = ctx.switchToHttp().getResponse<Response>();
    const key = req.headers['idempotency-key'];
    if (key === undefined) return next.handle();
    if (typeof key !== 'string' || key.length < 1 || key.length > 255) {
      throw new BadRequestException(['Idempotency-Key header must be 1 to 255 characters']);
    }
    const scope = req.partner?.id ?? 'operator';
    const hash = createHash('sha256')
      .update(`${req.method} ${req.originalUrl.split('?')[0]} ${canonical(req.body)}`)
      .digest('hex');
    const status: number = Reflect.getMetadata(HTTP_CODE_METADATA, ctx.getHandler()) ?? (req.method === 'POST' ? 201 : 200);

    await this.db.query(
      `DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2
         AND (created_at < now() - interval '24 hours' OR (status_code IS NULL AND created_at < now() - interval '5 minutes'))`,
      [scope, key],
    );
    const claimed: unknown[] = await this.db.query(
      `INSERT INTO idempotency_keys (scope, key, request_hash) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING key`,
      [scope, key, hash],
    );
    if (claimed.length === 0) {
      const [row] = await this.db.query(`SELECT request_hash, status_code, response_body FROM idempotency_keys WHERE scope = $1 AND key = $2`, [scope, key]);
      if (!row) throw new ConflictException('A request with this Idempotency-Key is being processed; retry shortly');
      if (row.request_hash !== hash) {
        throw new UnprocessableEntityException('Idempotency-Key was already used with a different request body');
      }
      if (row.status_code === null) throw new ConflictException('A request with this Idempotency-Key is being processed; retry shortly');
      res.setHeader('Idempotent-Replayed', 'true');
      res.status(row.status_code);
      return of(row.response_body);
    }
    const release = () => this.db.query(`DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2`, [scope, key]);
    return next.handle().pipe(
      mergeMap((body) =>
        from(
          this.db
            .query(`UPDATE idempotency_keys SET status_code = $3, response_body = $4 WHERE scope = $1 AND key = $2`, [scope, key, status, JSON.stringify(body)])
            .then(() => body),
        ),
      ),
      catchError((error) => from(release().then(() => Promise.reject(error)))),
    );
  }
}
