import type { LifeEvent } from '../callback-lifecycle.js';

/**
 * The one file of the service whose SQL writes a callback's `status`: what each event of the
 * lifecycle table (src/callbacks/callback-lifecycle.ts) writes, as SQL, which the store's
 * statements compose. A statement that changes a callback's status takes it from here, so the
 * table and the statements cannot say two things (test/callback-lifecycle.spec.ts checks each
 * event's writes against the table's rows, and test/code-shape.spec.ts that no other file of src/
 * writes `status`).
 */

export type { LifeEvent };

/** The columns of `callbacks` a callback's life writes, in the order a statement lists them. */
const COLUMNS = [
  'status',
  'schedule_attempts',
  'schedule_started_at',
  'next_attempt_at',
  'last_error',
  'delivered_at',
  'lease_until',
] as const;
export type LifeColumn = (typeof COLUMNS)[number];

/** What a change writes: each column's new value as SQL; a column left out keeps its value. */
export type Writes = Partial<Record<LifeColumn, string>>;

/** A settled callback is due at no time and holds no lease. */
const SETTLED: Writes = { next_attempt_at: 'NULL', lease_until: 'NULL' };

/**
 * The one way a callback becomes `failed`: no next attempt, with its reason as its last_error.
 * Without a reason, the reason is written beside it, or was written before (a removed URL: its
 * callbacks in flight fail when they come back, with the reason the removal wrote).
 */
export function fail(reason?: string): Writes {
  return {
    status: `'failed'`,
    next_attempt_at: SETTLED.next_attempt_at,
    ...(reason === undefined ? {} : { last_error: reason }),
  };
}

/** Leaving `sending`: the lease is over. */
export const UNLEASED: Writes = { lease_until: SETTLED.lease_until };

/** The statuses an attempt's fate may give its callback (delivery/settle-attempt.ts decides which). */
export const FATE_STATUSES = ['delivered', 'pending', 'failed'] as const;

/**
 * Settlement's writes, for the events deliver, retry and fail: the fate settle-attempt.ts chose
 * for the attempt (its status one of FATE_STATUSES, its delay, its last error), each column of it
 * read by `fate` from the record statement's input (store/settlement.ts picks which of three
 * fates applies).
 */
export function settle(fate: (column: string) => string): string {
  return `status = ${fate('status')},
         schedule_attempts = c.schedule_attempts + ${fate('counts')},
         next_attempt_at = now() + ${fate('delay_ms')} * interval '1 millisecond', -- no delay (delivered, failed): NULL
         last_error = CASE WHEN ${fate('keeps_error')} THEN c.last_error ELSE ${fate('last_error')} END,
         delivered_at = CASE WHEN ${fate('status')} = 'delivered' THEN now() ELSE c.delivered_at END`;
}

/** A fresh schedule, due now (a redelivery). */
const FRESH: Writes = {
  schedule_attempts: '0',
  schedule_started_at: 'now()',
  next_attempt_at: 'now()',
  delivered_at: 'NULL',
};

/**
 * What each event of the lifecycle table writes (a builder takes the statement's parameters):
 * every event the table has, and no other. `settle` is settlement's, whose fate is data; `prune`
 * deletes the row (store/retention.ts).
 */
export const EVENT_WRITES = {
  record: { status: `'pending'`, next_attempt_at: 'now()' },
  admit: (leaseMs: string): Writes => ({
    status: `'sending'`,
    lease_until: `now() + ${leaseMs} * interval '1 millisecond'`,
  }),
  release: { status: `'pending'`, ...UNLEASED },
  lapse: { status: `'pending'`, ...UNLEASED },
  deliver: settle,
  retry: settle,
  fail,
  'due now': { next_attempt_at: 'now()' },
  // One in flight stays `sending` under its fresh schedule: its attempt settles it (settlement.ts).
  redeliver: choose(`status = 'sending'`, { status: `'sending'`, ...FRESH }, { status: `'pending'`, ...FRESH }),
  'move URL': {},
  'remove URL': {},
  prune: null,
} satisfies Record<LifeEvent, Writes | ((...sql: never[]) => Writes | string) | null>;

/**
 * Writes of one of two events, by a condition of the row: each column CASE WHEN `when` THEN the
 * first's ELSE the second's; `kept` spells a column an event leaves as it is.
 */
export function choose(
  when: string,
  then: Writes,
  otherwise: Writes,
  kept: (column: string) => string = (column) => column,
): Writes {
  const out: Writes = {};
  for (const column of COLUMNS) {
    if (!(column in then) && !(column in otherwise)) continue;
    const [a, b] = [then[column] ?? kept(column), otherwise[column] ?? kept(column)];
    out[column] = a === b ? a : `CASE WHEN ${when} THEN ${a}${b === 'NULL' ? '' : ` ELSE ${b}`} END`;
  }
  return out;
}

const inOrder = (w: Writes): [LifeColumn, string][] => COLUMNS.filter((c) => c in w).map((c) => [c, w[c]!]);

/** The writes as a SET list (in COLUMNS' order); each CASE after the first starts a line at `indent`. */
export function set(w: Writes, indent = ''): string {
  return inOrder(w)
    .map(
      ([column, value], i) => `${i > 0 ? (value.startsWith('CASE') ? `,\n${indent}` : ', ') : ''}${column} = ${value}`,
    )
    .join('');
}

/** The writes as an INSERT's columns and their values (a column left out takes its default). */
export function insert(w: Writes): { columns: string; values: string } {
  const cols = inOrder(w);
  return { columns: cols.map(([c]) => c).join(', '), values: cols.map(([, v]) => v).join(', ') };
}

/** A new callback, due now. */
export const RECORD = insert(EVENT_WRITES.record);

/**
 * A test callback: recorded, or failed at once when `notSent` (its reason, written beside) is not
 * null. A column one of them leaves out is the new row's default, NULL.
 */
export const recordOrFail = (notSent: string) =>
  insert(choose(`${notSent} IS NULL`, EVENT_WRITES.record, fail(), () => 'NULL'));

/**
 * Leaving `sending` without an attempt (release, lapse): back to waiting, or failed if its URL was removed
 * meanwhile (the removal wrote why).
 */
export const backToWaiting = (event: 'release' | 'lapse'): string =>
  set(choose('url_removed_at IS NULL', EVENT_WRITES[event], { ...fail(), ...UNLEASED }), '  ');

/**
 * The URL removed (`c`, its callbacks): they fail now, the reason written beside, but one in flight,
 * which stays `sending` and fails when it comes back (backToWaiting, settlement's fate).
 */
export const removeUrl = (indent: string): string =>
  set(
    choose(`c.status = 'sending'`, EVENT_WRITES['remove URL'], { ...fail(), ...UNLEASED }, (column) => `c.${column}`),
    indent,
  );
