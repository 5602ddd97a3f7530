import { DataSource } from 'typeorm';
import { REDELIVERABLE } from '../redelivery-rules.js';

/** A partner's replay window: failed callbacks created in [since, until), at one destination or all. */
export interface ReplayWindow {
  partnerId: string;
  since: Date;
  until: Date;
  destination?: string;
}

/**
 * The ids of the partner's redeliverable failed callbacks created in the window, at most `cap`
 * (test callbacks and operational events are not replayed). On `callbacks_status_seq_idx`
 * (status, seq): the failed ones only.
 */
export async function failedInWindow(db: DataSource, w: ReplayWindow, cap: number): Promise<string[]> {
  const rows: { id: string }[] = await db.query(
    `SELECT id FROM callbacks
      WHERE status = 'failed' AND partner_id = $1 AND event_type IS NULL AND ${REDELIVERABLE}
        AND created_at >= $2 AND created_at < $3 AND ($4::text IS NULL OR destination = $4)
      LIMIT $5`,
    [w.partnerId, w.since, w.until, w.destination ?? null, cap],
  );
  return rows.map((r) => r.id);
}
