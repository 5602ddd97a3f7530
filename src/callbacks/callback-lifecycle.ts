import type { CallbackStatus } from './callback-status.js';

/** A callback's state: its status, or no row (before it is recorded, after retention deleted it). */
export type LifeState = CallbackStatus | null;

/**
 * One way a callback's state changes: from which states, on what event, to which, what else the
 * same statement writes, who may cause it, and the store's statements that make it (by their
 * names in src/callbacks/store/statements.ts). What each event writes is SQL of one file,
 * src/callbacks/store/lifecycle.ts, the only one whose SQL writes a callback's status. A callback
 * becomes `failed` only by the event `fail`, each row of it with its reason (the `last_error` it
 * leaves).
 */
export interface Transition {
  from: LifeState[];
  event:
    | 'record'
    | 'admit'
    | 'release'
    | 'lapse'
    | 'deliver'
    | 'retry'
    | 'fail'
    | 'due now'
    | 'redeliver'
    | 'move URL'
    | 'remove URL'
    | 'prune';
  /** `same`: the status stays as it was. */
  to: LifeState[] | 'same';
  /** What the statement writes besides the status. */
  writes: string;
  /** Who may cause it. */
  by: string;
  statements: string[];
  /** `fail` only: why, as its last_error says. */
  reason?: string;
}

/** The statements of settlement's record: the attempts' fates, with the operational events of what they change. */
const RECORDS = [
  'settlement-record',
  'settlement-record+circuit',
  'settlement-record+failures',
  'settlement-record+circuit+failures',
];
/** The statements that write operational events, whose deliveries are callbacks of their own. */
const EVENTS = [
  'admission-expire',
  'admission-flush-notices',
  'settlement-record+circuit',
  'settlement-record+failures',
  'settlement-record+circuit+failures',
  'settlement-refold+circuit',
];

/**
 * The whole life of a callback (docs/architecture.md, "Callback states"). test/callback-lifecycle.spec.ts
 * checks every statement of the store that writes a status against it, and the random histories of
 * test/delivery-statements.e2e-spec.ts check every change of status they see.
 */
export const CALLBACK_TRANSITIONS: Transition[] = [
  {
    from: [null],
    event: 'record',
    to: ['pending'],
    writes: 'the row, due now (body, URL, trace); its destination (trigger)',
    // Funding's one-row writes insert through CallbackInserts.insertWithRows: callbacks-insert's SQL (callbackInsert).
    by: 'a change, in its transaction',
    statements: ['callbacks-insert'],
  },
  {
    from: [null],
    event: 'record',
    to: ['pending'],
    writes: 'a test callback or test event: one attempt allowed',
    by: 'the partner',
    statements: ['test-callbacks-insert', 'test-events-insert'],
  },
  {
    from: [null],
    event: 'record',
    to: ['pending'],
    writes: "an operational event's delivery, with the event",
    by: 'the statement that makes the change it reports',
    statements: EVENTS,
  },
  {
    from: ['pending'],
    event: 'admit',
    to: ['sending'],
    writes: 'a lease of CALLBACK_TIMEOUT_MS + 30 s; then a BullMQ job',
    by:
      'the admission leader, for a due callback whose destination has room ' +
      "(first, an open one's probe a redelivery asked for)",
    statements: ['admission-admit', 'admission-admit-probes'],
  },
  {
    from: ['sending'],
    event: 'release',
    to: ['pending'],
    writes: 'nothing: as it was',
    by: 'the admission leader, when Redis refused the jobs',
    statements: ['admission-release'],
  },
  {
    from: ['sending'],
    event: 'lapse',
    to: ['pending'],
    writes: 'nothing: no attempt spent',
    by: "the leader's sweep, its lease over",
    statements: ['admission-lapse'],
  },
  // A lease may lapse while its attempt is under way: that attempt still settles the callback.
  {
    from: ['sending', 'pending', 'failed'],
    event: 'deliver',
    to: ['delivered'],
    writes: 'attempt row, delivered_at; the window grows',
    by: 'settlement, on a 2xx',
    statements: RECORDS,
  },
  {
    from: ['sending', 'pending'],
    event: 'retry',
    to: ['pending'],
    writes:
      'attempt row, last_error, the next time; window halved, breaker counts ' +
      '(a failed probe spends no attempt of the schedule)',
    by: 'settlement, attempts left or a failed probe',
    statements: RECORDS,
  },
  {
    from: ['pending'],
    event: 'due now',
    to: ['pending'],
    writes: 'next_attempt_at',
    by: "settlement, its destination's probe answered",
    statements: ['settlement-record+circuit', 'settlement-record+circuit+failures', 'settlement-refold+circuit'],
  },
  {
    from: ['pending'],
    event: 'due now',
    to: ['pending'],
    writes: 'next_attempt_at; audit entry',
    by: 'an operator (Promote); a redelivery of a pending one (its schedule kept)',
    statements: ['callbacks-due-now'],
  },
  {
    from: ['sending', 'pending'],
    event: 'fail',
    to: ['failed'],
    writes: 'attempt row; callbacks.failed event',
    by: 'settlement',
    statements: RECORDS,
    reason: 'the last attempt failed, a final answer, or the destination refused it',
  },
  {
    from: ['pending'],
    event: 'fail',
    to: ['failed'],
    writes: 'callbacks.failed event',
    by: "the leader's sweep, its destination open",
    statements: ['admission-expire'],
    reason: "its schedule's total passed while its destination was open",
  },
  {
    from: ['pending', 'failed'],
    event: 'fail',
    to: ['failed'],
    writes: 'url_removed_at; no redelivery',
    by: 'the partner, removing its URL',
    statements: ['url-remove'],
    reason: 'callback URL removed by the partner',
  },
  {
    from: ['sending'],
    event: 'fail',
    to: ['failed'],
    writes: 'nothing more',
    by: 'release, lapse or settlement of a callback whose URL was removed meanwhile',
    statements: ['admission-release', 'admission-lapse', ...RECORDS],
    reason: 'callback URL removed by the partner',
  },
  {
    from: [null],
    event: 'fail',
    to: ['failed'],
    writes: 'a test callback or test event, unsent',
    by: 'the partner, its destination open',
    statements: ['test-callbacks-insert', 'test-events-insert'],
    reason: "its destination's circuit is open",
  },
  // Its destination open: it is asked to go as the next probe (destinations.probe_id), sent as soon
  // as no probe is in flight.
  {
    from: ['delivered', 'failed', 'pending'],
    event: 'redeliver',
    to: ['pending'],
    writes: "a fresh schedule, due now (same id); its open destination's next probe asked for; audit entry",
    by: 'the partner, an operator, the portal, the dashboard: one or in bulk (an open destination refuses none)',
    statements: ['redelivery-restart', 'replay-failed'],
  },
  // An attempt in flight settles it, under the fresh schedule; its open destination's next probe goes right after.
  {
    from: ['sending'],
    event: 'redeliver',
    to: 'same',
    writes: "a fresh schedule; its open destination's next probe asked for",
    by: 'the partner, an operator, the portal, the dashboard',
    statements: ['redelivery-restart'],
  },
  {
    from: ['pending', 'sending', 'failed'],
    event: 'move URL',
    to: 'same',
    writes: 'url and so its destination (trigger); sending: next_url, its url once it settles or lapses',
    by: 'the partner',
    statements: ['url-move'],
  },
  {
    from: ['sending'],
    event: 'remove URL',
    to: 'same',
    writes: 'url_removed_at: it fails when it settles, unless delivered',
    by: 'the partner, removing its URL',
    statements: ['url-remove'],
  },
  {
    from: ['delivered'],
    event: 'prune',
    to: [null],
    writes: 'its attempts and operational event deleted',
    by: 'retention, past CALLBACK_RETENTION',
    statements: ['retention-prune'],
  },
];

/** An event of the table: what changes a callback's state (store/lifecycle.ts writes each one's SQL). */
export type LifeEvent = Transition['event'];

/** Whether the table has a way from one state to another (a state may also stay as it is). */
export function permits(from: LifeState, to: LifeState): boolean {
  return from === to || CALLBACK_TRANSITIONS.some((t) => t.from.includes(from) && t.to !== 'same' && t.to.includes(to));
}
