import type { Circuit } from '../callbacks/index.js';
import { timeLabel } from './portal-format.js';

/** What a callback's page reads of it: the row as stored, and the next attempt it shows (circuit-wait.ts). */
export interface OutlookCallback {
  status: 'pending' | 'sending' | 'delivered' | 'failed';
  test: boolean;
  attemptLimit: number | null;
  scheduleAttempts: number;
  scheduleStartedAt: Date;
  createdAt: Date;
  deliveredAt: Date | null;
  urlRemovedAt: Date | null;
  lastError: string | null;
  /** The next attempt as every view shows it (nextAttemptShown), ISO or null. */
  nextAttemptAt: string | null;
}

export interface OutlookAttempt {
  number: number;
  startedAt: Date;
  statusCode: number | null;
}

/** The deployment's schedule (RetryPolicy) and the one rule the outlook reads back from a stored error. */
export interface Schedule {
  maxAttempts: number;
  totalMs: number;
  endedByOutage: (lastError: string | null) => boolean;
}

/** What comes next for a callback, and what each attempt was as far as the stored rows tell. */
export interface Outlook {
  next: string;
  /** Per attempt (by number): its place in a schedule. */
  kinds: Map<number, string>;
  /** Said once under the attempts, when the rows cannot place each attempt exactly. */
  note: string | null;
}

const allowedOf = (c: OutlookCallback, s: Schedule) => Math.min(c.attemptLimit ?? s.maxAttempts, s.maxAttempts);
/** A redelivery (or replay) restarted its schedule: the row was made with both times equal. */
const redeliveredAt = (c: OutlookCallback) =>
  c.scheduleStartedAt.getTime() > c.createdAt.getTime() ? c.scheduleStartedAt : null;

/**
 * The callback page's "what comes next" and each attempt's kind, derived exactly from what the
 * rows keep: its status, the attempts its current schedule spent (probes of an open destination
 * spend none), when that schedule started (a redelivery restarts it), its lastError and whether its
 * URL was removed. `circuit`: its destination's, when open.
 */
export function outlookOf(
  c: OutlookCallback,
  attempts: OutlookAttempt[],
  circuit: Circuit | null,
  s: Schedule,
): Outlook {
  const { kinds, note } = attemptKinds(c, attempts, s);
  return { next: nextOf(c, attempts, circuit, s), kinds, note };
}

function nextOf(c: OutlookCallback, attempts: OutlookAttempt[], circuit: Circuit | null, s: Schedule): string {
  const allowed = allowedOf(c, s);
  const left = Math.max(0, allowed - c.scheduleAttempts);
  if (c.status === 'delivered') return `None: delivered at ${timeLabel(c.deliveredAt)}. Redeliver sends it again.`;
  if (c.status === 'failed') return failedOutlook(c, attempts, s, allowed);
  if (c.status === 'sending') {
    return `An attempt is under way now: attempt ${c.scheduleAttempts + 1} of the ${allowed} its schedule allows.`;
  }
  const remaining = `${left} of the ${allowed} attempts its schedule allows remain`;
  if (circuit && circuit.openedAt !== null) {
    const ends = timeLabel(c.scheduleStartedAt.getTime() + s.totalMs);
    return (
      `Waiting for its destination, whose circuit is open since ${timeLabel(circuit.openedAt)}: nothing goes there ` +
      `before its next probe, at ${timeLabel(c.nextAttemptAt)} (this callback or one before it is the probe). ` +
      `${remaining}. If the destination is still open at ${ends}, it fails without another attempt.`
    );
  }
  return `Next attempt at ${timeLabel(c.nextAttemptAt)}: ${remaining}, that one included.`;
}

function failedOutlook(c: OutlookCallback, attempts: OutlookAttempt[], s: Schedule, allowed: number): string {
  const again = ' Redeliver sends it again with a fresh schedule.';
  if (c.urlRemovedAt)
    return `None: its callback URL was removed at ${timeLabel(c.urlRemovedAt)}, so it cannot be redelivered.`;
  if (s.endedByOutage(c.lastError)) {
    const ended = timeLabel(c.scheduleStartedAt.getTime() + s.totalMs);
    const how = c.scheduleAttempts === 0 ? 'Failed without an attempt' : `Failed after ${c.scheduleAttempts} attempts`;
    return `None. ${how}: its destination stayed open until its schedule ended (${ended}).${c.test ? '' : again}`;
  }
  if (c.test) {
    return attempts.length === 0
      ? "None: a test callback is not sent while its destination's circuit is open. Send a new one once it recovers."
      : 'None: a test callback gets one attempt, and it did not succeed. Send a new one.';
  }
  if (c.scheduleAttempts >= allowed)
    return `None: it failed after the last attempt of its schedule (${allowed} of ${allowed}).${again}`;
  if (attempts.at(-1)?.statusCode === 410)
    return `None: your receiver answered 410 Gone, which ends a callback at once.${again}`;
  return `None: no request could go out to its URL (the address is refused), which ends a callback at once.${again}`;
}

/**
 * Each attempt's place: under an earlier schedule (before a redelivery), or in the current one.
 * The current one's attempts are first attempt and retries n of N − 1 when none of them was a
 * probe (they are as many as the schedule spent); otherwise the rows cannot say which were probes.
 */
function attemptKinds(c: OutlookCallback, attempts: OutlookAttempt[], s: Schedule): Pick<Outlook, 'kinds' | 'note'> {
  const kinds = new Map<number, string>();
  const restarted = redeliveredAt(c);
  const current = attempts.filter((a) => a.startedAt.getTime() >= c.scheduleStartedAt.getTime());
  for (const a of attempts) if (!current.includes(a)) kinds.set(a.number, 'before its redelivery: an earlier schedule');
  if (c.test) {
    for (const a of current) kinds.set(a.number, "a test callback's one attempt");
    return { kinds, note: null };
  }
  const allowed = allowedOf(c, s);
  const probes = current.length - c.scheduleAttempts;
  if (probes <= 0) {
    current.forEach((a, i) => {
      const first = restarted ? `the redelivery at ${timeLabel(restarted)}: first attempt` : 'first attempt';
      kinds.set(a.number, i === 0 ? first : `retry ${i} of ${allowed - 1}`);
    });
    return { kinds, note: null };
  }
  for (const a of current) kinds.set(a.number, restarted ? 'since the redelivery' : 'in its schedule');
  const note =
    `${probes} of the ${current.length} attempts ${restarted ? 'since its redelivery' : 'of its schedule'} ` +
    `were probes of its open destination, which spend none of the ${allowed} attempts its schedule allows.`;
  return { kinds, note };
}
