import { Injectable } from '@nestjs/common';
import { SerialBatcher } from '../common/batcher.js';
import { untraced } from '../telemetry/trace-context.js';
import { CALLBACKS_CHANNEL, WakeUpRepository } from './wake-up.repository.js';

export { CALLBACKS_CHANNEL };

/*
 * `NOTIFY funding_callbacks` (CALLBACKS_CHANNEL) wakes every relay: for rows written outside this service's own write
 * paths (a bulk load). The service's writes do not send it inside their transactions: PostgreSQL
 * serialises the commits of all transactions that NOTIFY (a cluster-wide lock held through the WAL
 * flush), so every change would wait for the others' flushes. They wake admission after their
 * commit instead (this process's relay, or a NOTIFY on its own when another process leads).
 */

/**
 * Tells admission that there may be something to admit (callbacks committed, a delivery settled,
 * a worker announced its slots). In the process whose relay leads admission it wakes that relay's
 * loop; elsewhere it sends `NOTIFY funding_callbacks`, one at a time (wake-ups meanwhile go
 * together in the next). A lost wake-up costs at most the admission timer's second.
 */
@Injectable()
export class AdmissionSignal {
  private leader: { wake(): void } | null = null;
  private readonly notifies = new SerialBatcher<null, null>(async (calls) => {
    await this.wakeUps.notify().catch(() => undefined);
    return calls;
  }, Number.MAX_SAFE_INTEGER);

  constructor(private readonly wakeUps: WakeUpRepository) {}

  /** This process's relay, while it leads admission (null when it stops leading). */
  lead(relay: { wake(): void } | null): void {
    this.leader = relay;
  }

  /**
   * Outside the trace of whoever wakes it (a request, an attempt): a pass admits the callbacks of
   * many requests at once, and would otherwise be filed under one of them.
   */
  wake(): void {
    untraced(() => (this.leader ? this.leader.wake() : void this.notifies.call(null)));
  }
}
