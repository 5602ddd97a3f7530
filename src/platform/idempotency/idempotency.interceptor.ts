import { CallHandler, ExecutionContext, Injectable, Logger, NestInterceptor } from '@nestjs/common';
import { HTTP_CODE_METADATA } from '@nestjs/common/constants.js';
import { hash as sha } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { catchError, from, mergeMap, Observable, of } from 'rxjs';
import { DomainError, invalidProperty } from '../http/domain-error.js';
import { ErrorCode } from '../http/error-codes.js';
import { idempotencyRow, SecretBox } from '../crypto/secret-box.js';
import { IdempotencyKeyRepository } from './idempotency-key.repository.js';

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

/** Storing a response is retried this long before the key is left claimed (see below). */
const STORE_RETRY_DELAYS_MS = [50, 250, 1000];
const JSON_TYPE = 'application/json; charset=utf-8';
const IN_USE =
  'A request with this Idempotency-Key is being processed, or was interrupted with an unknown outcome; ' +
  'retry shortly, or check before retrying with a new key';

/**
 * Safe retries of creates (docs/partners.md, "Safe retries of creates"). The first request with a
 * key claims it (a row with no response yet), runs, and stores the exact bytes it answers; the
 * same key and request within 24 h gets those bytes again. Why it cannot double a create:
 * - the response is stored as sealed ASCII text (secret-box.ts) of the serialised body: no
 *   content of the body (a lone surrogate, a NUL) can make the store fail, and the partner
 *   create's once-shown credentials are not in clear at rest;
 * - a request that failed (the handler threw: its transaction rolled back) releases the key;
 * - a request that succeeded but whose response could not be stored (the database went away
 *   after the commit) keeps the key claimed, as does a process that died mid-request: the
 *   outcome is unknown there, so the key answers 409 until it expires rather than run again.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private readonly log = new Logger('Idempotency');

  constructor(
    private readonly keys: IdempotencyKeyRepository,
    private readonly box: SecretBox,
  ) {}

  async intercept(ctx: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const req = ctx
      .switchToHttp()
      .getRequest<FastifyRequest & { partner?: { id: string }; operator?: { id: string } }>();
    const res = ctx.switchToHttp().getResponse<FastifyReply>();
    const key = req.headers['idempotency-key'];
    if (key === undefined) return next.handle();
    if (typeof key !== 'string' || !/^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/.test(key)) {
      throw invalidProperty(
        'Idempotency-Key header must be 1 to 255 printable ASCII characters, not starting or ending with a space',
      );
    }
    // Keys are the caller's own: a partner's, or one named operator's (another's key never replays to them).
    const scope = req.partner?.id ?? `operator:${req.operator!.id}`;
    const hash = sha('sha256', `${req.method} ${req.originalUrl.split('?')[0]} ${canonical(req.body)}`, 'hex');
    const status =
      (Reflect.getMetadata(HTTP_CODE_METADATA, ctx.getHandler()) as number | undefined) ??
      (req.method === 'POST' ? 201 : 200);

    // One round trip claims the key; a row within the window is left as it is.
    if (!(await this.keys.claim(scope, key, hash))) {
      const row = await this.keys.find(scope, key);
      if (row && row.request_hash !== hash) {
        throw new DomainError(
          'rule',
          ErrorCode.idempotency_key_reused,
          'Idempotency-Key was already used with a different request body',
        );
      }
      if (!row || row.status_code === null || row.response === null) {
        throw new DomainError('conflict', ErrorCode.idempotency_key_in_use, IN_USE);
      }
      const replayed = this.opened(row.response, scope, key);
      res.header('Idempotent-Replayed', 'true').header('Content-Type', JSON_TYPE).status(row.status_code);
      return of(replayed);
    }
    return next.handle().pipe(
      // Only the handler's failure releases the key: its transaction did not commit.
      catchError((error: unknown) =>
        from(
          this.keys
            .release(scope, key)
            .catch(() => undefined)
            .then(() => {
              throw error;
            }),
        ),
      ),
      mergeMap((body) => from(this.complete(scope, key, status, body, res))),
    );
  }

  /**
   * The stored response, opened for its row. One that does not open (sealed for another row, or
   * its SECRETS_KEY entry missing) is never replayed: the outcome is unknown to this process, so
   * 409 as for an interrupted request, and the error logged.
   */
  private opened(response: string, scope: string, key: string): string {
    try {
      return this.box.open(response, 'idempotency_keys.response', idempotencyRow(scope, key));
    } catch (e) {
      this.log.error(`a stored idempotent response could not be opened, answering 409: ${(e as Error).message}`);
      throw new DomainError('conflict', ErrorCode.idempotency_key_in_use, IN_USE);
    }
  }

  /** Stores and returns the exact text sent; never fails: the create has committed by now. */
  private async complete(
    scope: string,
    key: string,
    status: number,
    body: unknown,
    res: FastifyReply,
  ): Promise<string> {
    const text = JSON.stringify(body);
    res.header('Content-Type', JSON_TYPE);
    const sealed = this.box.seal(text, 'idempotency_keys.response', idempotencyRow(scope, key));
    for (let attempt = 0; ; attempt++) {
      try {
        await this.keys.complete(scope, key, status, sealed);
        return text;
      } catch (e) {
        if (attempt >= STORE_RETRY_DELAYS_MS.length) {
          this.log.error(
            'could not store the response of a completed request ' +
              `(Idempotency-Key kept claimed, answering 409 to retries): ${(e as Error).message}`,
          );
          return text;
        }
        await new Promise((r) => setTimeout(r, STORE_RETRY_DELAYS_MS[attempt]));
      }
    }
  }
}
