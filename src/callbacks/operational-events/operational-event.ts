/** The operational events a partner is told of (docs/partners.md, "Operational events"). */
export const OPERATIONAL_EVENT_TYPES = [
  'destination.failing',
  'destination.recovered',
  'callbacks.failed',
  'operations.test',
] as const;
export type OperationalEventType = (typeof OPERATIONAL_EVENT_TYPES)[number];

/** `callbacks.failed` goes out at most once per destination and partner in this long. */
export const FAILED_NOTICE_WINDOW = `interval '5 minutes'`;

/** An event as the partner's list shows it; `status` and the rest are its delivery's (none sent: `not_sent`). */
export interface OperationalEventView {
  id: string;
  type: OperationalEventType;
  timestamp: string;
  data: Record<string, unknown>;
  status: 'pending' | 'delivered' | 'failed' | 'not_sent';
  attemptCount: number;
  lastError: string | null;
  deliveredAt: string | null;
}
