import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Callback } from '../callbacks/callback.entity.js';
import { CallbackRecorder } from '../callbacks/callback-recorder.js';
import { buildCallbackBody, CallbackMessage } from '../callbacks/callback-message.js';
import { CallbackUrlValidator } from '../callbacks/callback-url.validator.js';
import { admitOneMoreTest } from './test-callback-rate.js';
import { noTestUrl, testTarget } from './test-callback-target.js';

export interface TestCallbackRequest {
  companyId: string;
  url?: string;
  message?: number;
}

/**
 * A test callback is an ordinary callback row whose schedule allows one attempt
 * (`attempt_limit` 1) and that no feed lists (`test`): admission, the worker, signing, the
 * source addresses, the attempt log, windows and breaker treat it like any other, and settlement
 * fails it after that one attempt. While its destination's circuit is open it is recorded
 * `failed` at once, unsent.
 */
@Injectable()
export class TestCallbacks {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly urls: CallbackUrlValidator,
    private readonly recorder: CallbackRecorder,
  ) {}

  async send(partnerId: string, req: TestCallbackRequest): Promise<Callback> {
    const message: CallbackMessage = req.message ?? CallbackMessage.CreditLimitUpdated;
    const given = await this.urls.check('url', req.url);
    const callback = await this.db.transaction(async (m) => {
      await admitOneMoreTest(m, partnerId);
      const target = await testTarget(m, partnerId, req.companyId, message);
      const url = given ?? target.url;
      if (url === null) throw noTestUrl(message, target.source);
      const [circuit]: { open: string | null }[] = await m.query(
        `SELECT 'destination ' || origin || ' circuit open since ' || to_char(opened_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
                || coalesce(' (last error: ' || last_error || ')', '') || '; test callback not sent' AS open
           FROM destinations WHERE origin = callback_origin($1) AND opened_at IS NOT NULL`,
        [url],
      );
      const [row]: { id: string }[] = await m.query(
        `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at, last_error, test, attempt_limit)
         VALUES ($1, $2, $3, $4, $5, CASE WHEN $6::text IS NULL THEN 'pending' ELSE 'failed' END, CASE WHEN $6::text IS NULL THEN now() END, $6, true, 1)
         RETURNING id`,
        [partnerId, req.companyId, message, url, buildCallbackBody(message, target.ids), circuit?.open ?? null],
      );
      return m.findOneByOrFail(Callback, { id: row.id });
    });
    this.recorder.committed(callback.status === 'pending' ? 1 : 0);
    return callback;
  }
}
