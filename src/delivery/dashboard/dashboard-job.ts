import type { JobState, QueueJobJson } from '@bull-board/api/typings/app';
import { type AttemptRow, CallbackMessage, callbackOrigin, type DashboardRow } from '../../callbacks/index.js';
import { nextAttemptShown, probeReady } from '../../callbacks/index.js';
import { isSuccessStatus } from '../../egress/index.js';

/**
 * A callback row as the queue dashboard shows it: a bull-board job whose every field comes from
 * PostgreSQL. Pure functions, so the whole mapping is tested without a database. The dashboard
 * shows its pages to whoever holds the operator credential, so nothing here carries a secret, a
 * body, or a URL's path or query (which may carry a partner's token): a destination is its origin.
 */

/** The columns of one callback the dashboard reads, and its last attempt (if any). */
export type { AttemptRow, DashboardRow };

export type DashboardState = Extract<JobState, 'active' | 'waiting' | 'delayed' | 'completed' | 'failed' | 'unknown'>;

/**
 * A destination as the dashboard names it: its origin (callbackOrigin) without user-info, or
 * "(no origin)" for a URL that has none, never a path or query.
 */
export function destinationOrigin(url: string): string {
  const origin = callbackOrigin(url);
  return /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*$/.test(origin) ? origin.replace(/\/\/[^@]*@/, '//') : '(no origin)';
}

/** Any URL inside a message (an error may quote one) cut to its origin. */
export function withoutUrlPaths(text: string): string {
  return text.replace(/\bhttps?:\/\/[^\s"'<>]+/gi, (u) => destinationOrigin(u));
}

/** What a job delivers: a callback, or an operational event (read at its partner's events, never redelivered). */
export type DashboardJobKind = 'callback' | 'operational-event';

export const jobKind = (r: Pick<DashboardRow, 'eventType'>): DashboardJobKind =>
  r.eventType === null ? 'callback' : 'operational-event';

/** The job's name: which callback or operational event this is and whose, readable in a list of thousands. */
export function jobName(r: Pick<DashboardRow, 'message' | 'companyId' | 'destination' | 'partnerName' | 'eventType'>) {
  return r.eventType === null ? callbackJobName(r) : eventJobName({ ...r, eventType: r.eventType });
}

/** A callback: its message (code and name), partner, company and destination origin. */
export function callbackJobName(c: Pick<DashboardRow, 'message' | 'companyId' | 'destination' | 'partnerName'>) {
  const name = (c.message !== null && CallbackMessage[c.message]) || 'Unknown';
  const origin = destinationOrigin(c.destination);
  return `${c.message} ${name} · partner ${c.partnerName} · company ${c.companyId} · ${origin}`;
}

/** An operational event's delivery: its type, partner, and the origin of the partner's Operations URL. */
export function eventJobName(e: { eventType: string; partnerName: string; destination: string }): string {
  return `event ${e.eventType} · partner ${e.partnerName} · operations URL ${destinationOrigin(e.destination)}`;
}

/**
 * Which tab a callback is on: `sending` is admitted to a worker (active); `pending` waits in
 * PostgreSQL, for room at its destination once due (waiting) or for its time (delayed).
 */
export function dashboardState(r: Pick<DashboardRow, 'status' | 'nextAttemptAt'>, now: Date): DashboardState {
  switch (r.status) {
    case 'sending':
      return 'active';
    case 'pending':
      return r.nextAttemptAt !== null && r.nextAttemptAt > now ? 'delayed' : 'waiting';
    case 'delivered':
      return 'completed';
    case 'failed':
      return 'failed';
    default:
      return 'unknown';
  }
}

/**
 * Whether the row's current state follows from its last attempt, rather than from a redelivery
 * since (or an expiry without any attempt). The attempt counter says so whatever the clocks; the
 * times (the attempt's from the worker, the schedule's from PostgreSQL) cover an uncounted probe.
 */
const followsAttempt = (
  r: Pick<DashboardRow, 'scheduleAttempts' | 'scheduleStartedAt'>,
  lastStartedAt: Date | null | undefined,
): boolean => lastStartedAt != null && (r.scheduleAttempts > 0 || lastStartedAt >= r.scheduleStartedAt);

/**
 * When the callback finished: delivered_at, or for a dead letter the end of the attempt that
 * failed it. A callback failed without an attempt of its schedule (its destination stayed open
 * until the schedule ran out) has no recorded failure time: none is shown rather than a guess.
 */
function finishedAt(r: DashboardRow): number | null {
  if (r.status === 'delivered') return r.deliveredAt?.getTime() ?? null;
  if (r.status !== 'failed' || !followsAttempt(r, r.lastAttemptStartedAt)) return null;
  return r.lastAttemptStartedAt!.getTime() + (r.lastAttemptDurationMs ?? 0);
}

/**
 * The job bull-board shows for a callback. "Will run at" is bull-board's timestamp + delay, so a
 * delayed job's delay is the distance from creation to next_attempt_at, which it then shows exactly.
 */
export function dashboardJobJson(r: DashboardRow, now: Date): QueueJobJson {
  const state = dashboardState(r, now);
  const delay = state === 'delayed' ? r.nextAttemptAt!.getTime() - r.createdAt.getTime() : 0;
  return {
    id: r.id,
    name: jobName(r),
    data: jobKind(r) === 'callback' ? { callbackId: r.id } : { eventId: r.id, eventType: r.eventType },
    opts: delay > 0 ? { delay } : {},
    delay,
    timestamp: r.createdAt.getTime(),
    processedOn: r.lastAttemptStartedAt?.getTime() ?? null,
    finishedOn: finishedAt(r),
    attemptsMade: r.attemptCount,
    failedReason: failedReason(r, state),
    stacktrace: [],
    returnvalue: null,
    progress: 0,
  };
}

/**
 * Only a dead letter is a failed job; a pending callback's last error is in its log. bull-board's
 * page offers Retry on a job exactly when it has a failed reason, and an operational event is not
 * redelivered: a dead event has none, its error is in its log (the Logs tab, opened first).
 */
function failedReason(r: DashboardRow, state: DashboardState): string {
  if (state !== 'failed' || jobKind(r) === 'operational-event') return '';
  return withoutUrlPaths(r.lastError ?? 'failed (no error recorded)');
}

/** What the row's state says comes after the attempt it follows from, as of `now` (the read's). */
function outcome(r: DashboardRow, now: Date): string {
  switch (r.status) {
    case 'delivered':
      return 'delivered';
    case 'failed':
      return `failed: ${r.lastError ?? '(no error recorded)'}`;
    case 'sending':
      return 'being sent now';
    case 'pending':
      return waitsFor(r, now);
    default:
      return r.status;
  }
}

/**
 * When a pending callback's next attempt comes (nextAttemptShown, as the API shows it), and, held
 * by its destination's open circuit, why: nothing goes there before the next probe.
 */
function waitsFor(r: DashboardRow, now: Date): string {
  const own = { status: r.status, nextAttemptAt: r.nextAttemptAt?.getTime() ?? null };
  const next = nextAttemptShown(own, r.circuit, now.getTime());
  const at = next === null ? null : new Date(next).toISOString();
  if (r.circuit?.openedAt == null) return at ? `next attempt at ${at}` : 'next attempt due now';
  const since = new Date(r.circuit.openedAt).toISOString();
  const ready = probeReady(r.circuit, now.getTime());
  const probe = ready ? 'next probe now (half-open: it or the next callback goes as the probe)' : `next probe at ${at}`;
  return `waiting: circuit open since ${since}, ${probe}`;
}

/** One line of the job's log: when one attempt started, what it got, and (given) what followed. */
export function attemptLogLine(a: AttemptRow, then?: string): string {
  const answer = a.error ?? (a.statusCode !== null ? `HTTP ${a.statusCode}` : 'no answer');
  const line =
    `attempt ${a.number} at ${a.startedAt.toISOString()}: ${answer} in ${a.durationMs} ms ` +
    `from ${a.sourceAddress ?? 'unknown address'}`;
  return withoutUrlPaths(then ? `${line} → ${then}` : line);
}

/**
 * The job's log (the dashboard's Logs tab): one line per attempt, oldest first. The last one says
 * what followed it (delivered, failed, the next attempt's time) when the row's state follows from
 * it; otherwise (no attempt yet, or a redelivery since) a last line says so. An earlier attempt
 * says "delivered" if it was (the callback was redelivered since); otherwise the next line is
 * what followed. `attempts` may be the latest ones only: a first line then says which are left out.
 */
export function attemptLog(r: DashboardRow, attempts: AttemptRow[], now: Date): string[] {
  const follows = followsAttempt(r, attempts.at(-1)?.startedAt);
  const omitted =
    attempts.length > 0 && attempts[0].number > 1
      ? [`attempts 1 to ${attempts[0].number - 1} not shown (GET /admin/v1/callbacks/${r.id} lists every attempt)`]
      : [];
  const lines = attempts.map((a, i) => {
    if (i === attempts.length - 1 && follows) return attemptLogLine(a, outcome(r, now));
    return attemptLogLine(a, isSuccessStatus(a.statusCode) ? 'delivered' : undefined);
  });
  if (!follows) {
    const since = r.scheduleStartedAt.getTime() === r.createdAt.getTime() ? 'created' : 'redelivered';
    lines.push(
      withoutUrlPaths(`${since} at ${r.scheduleStartedAt.toISOString()}, no attempt since → ${outcome(r, now)}`),
    );
  }
  return [...omitted, ...lines];
}
