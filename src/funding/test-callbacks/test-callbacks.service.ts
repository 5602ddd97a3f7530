import { Injectable } from '@nestjs/common';
import {
  buildCallbackBody,
  Callback,
  CallbackMessage,
  callbackOrigin,
  TestCallbackRepository,
} from '../../callbacks/index.js';
import { type Actor, AuditLog } from '../../operators/index.js';
import { admitOneMoreTest, testNotSentError } from '../../delivery/index.js';
import { TransactionRunner } from '../../platform/index.js';
import { CallbackUrlValidator } from '../../egress/index.js';
import { TestTargets } from './test-callback-targets.js';
import { noTestUrl } from './test-callback-target.js';

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
 * `failed` at once, unsent. Sent by an operator in the partner's portal (`actor`), it is audited
 * naming the operator in the same transaction (its origin, never the URL's path or query).
 */
@Injectable()
export class TestCallbacks {
  constructor(
    private readonly urls: CallbackUrlValidator,
    private readonly writes: TransactionRunner,
    private readonly audit: AuditLog,
    private readonly tests: TestCallbackRepository,
    private readonly targets: TestTargets,
  ) {}

  async send(partnerId: string, req: TestCallbackRequest, actor?: Actor): Promise<Callback> {
    const message: CallbackMessage = req.message ?? CallbackMessage.CreditLimitUpdated;
    const given = await this.urls.check('url', req.url);
    return this.writes.transaction(async (m) => {
      await admitOneMoreTest(this.tests, m, partnerId);
      const target = await this.targets.find(m, partnerId, req.companyId, message);
      const url = given ?? target.url;
      if (url === null) throw noTestUrl(message, target.source);
      // Read in the same transaction: while its destination's circuit is open it is failed at once, unsent.
      const circuit = await this.tests.openCircuitOf(m, partnerId, url);
      const notSent = circuit ? testNotSentError(circuit.origin, circuit.openedAt, circuit.lastError) : null;
      const body = buildCallbackBody(message, target.ids);
      const sent = await this.tests.insertTestCallback(
        m,
        { partnerId, companyId: req.companyId, message, url, body },
        notSent,
      );
      if (actor) {
        // A new row is pending, or failed at once (its circuit open): never `sending`, which the API shows as pending.
        const after = { status: sent.status, message, companyId: req.companyId, destination: callbackOrigin(url) };
        await this.audit.record(m, actor, { targetType: 'callback', targetId: sent.id, before: {}, after });
      }
      return sent;
    });
  }
}
