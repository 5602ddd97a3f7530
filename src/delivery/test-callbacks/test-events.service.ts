import { Injectable } from '@nestjs/common';
import { callbackOrigin, TestCallbackRepository } from '../../callbacks/index.js';
import { type Actor, AuditLog } from '../../operators/index.js';
import { PartnerProfile } from '../../partners/index.js';
import { DomainError, ErrorCode, TransactionRunner } from '../../platform/index.js';
import { testNotSentError } from '../settle-attempt.js';
import { admitOneMoreTest } from './test-callback-rate.js';

/**
 * A test event: an operational event of type `operations.test` (empty data) sent once to the
 * partner's Operations URL, signed and delivered like every operational event (so a receiver of
 * those is checked end to end), listed with them, given one attempt like a test callback and
 * counted with them in the partner's 10 a minute. While that URL's destination is open it is
 * recorded `failed` at once, unsent. Sent by an operator in the partner's portal (`actor`): audited
 * naming the operator, in the same transaction (the URL's origin only).
 */
@Injectable()
export class TestEvents {
  constructor(
    private readonly profile: PartnerProfile,
    private readonly writes: TransactionRunner,
    private readonly audit: AuditLog,
    private readonly tests: TestCallbackRepository,
  ) {}

  /** The event's id (its `webhook-id`). */
  async send(partnerId: string, actor?: Actor): Promise<string> {
    const url = (await this.profile.view(partnerId)).operationsUrl;
    if (url === null) {
      const why = 'No Operations URL is set: save one, then send a test event to it';
      throw new DomainError('rule', ErrorCode.test_callback_no_url, why);
    }
    return this.writes.transaction(async (m) => {
      await admitOneMoreTest(this.tests, m, partnerId);
      const circuit = await this.tests.openCircuitOf(m, partnerId, url);
      const notSent = circuit
        ? testNotSentError(circuit.origin, circuit.openedAt, circuit.lastError, 'test event')
        : null;
      const id = await this.tests.insertTestEvent(m, partnerId, url, notSent);
      if (actor) {
        const after = { testEvent: id, status: notSent ? 'failed' : 'pending', destination: callbackOrigin(url) };
        await this.audit.record(m, actor, { targetType: 'partner', targetId: partnerId, before: {}, after });
      }
      return id;
    });
  }
}
