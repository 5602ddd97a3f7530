/**
 * Every statement of the callback store, by name, with the connection its method runs it on:
 * what the plans tests explain (each on its connection, whose planner settings it was checked
 * under) and what the committed snapshots (queries/) hold. The only SQL text of the store a file
 * outside it may import is this catalogue's, and only a test or the snapshot script does
 * (test/code-shape.spec.ts): the service calls the store's methods.
 */
import { ADMIT, ADMIT_PROBES, CANDIDATES, CLEAR_ASKS, EXPIRE, LAPSE, OPEN_DESTINATIONS, RELEASE } from './admission.js';
import { COUNT_PENDING_AND_FAILED, STATE } from './counts.js';
import { COUNTS, DASHBOARD_TABS, DELAYED_IDS, LOG, ONE_ROW, PAGES } from './dashboard-reads.js';
import { LOAD } from './delivery-load.js';
import { READ_DESTINATIONS } from './destination-states.js';
import { DESTINATIONS_BY_PARTNER, LONGEST_OPEN } from './destination-summaries.js';
import {
  COUNT_OPEN,
  DESTINATION_STATES,
  KNOWN,
  LIST_DESTINATIONS,
  PROBE_NOW,
  WAITING_BY_CIRCUIT,
} from './destinations.js';
import { FEED_PAGE } from './feed-page.js';
import { OPEN_CIRCUITS } from './reads.js';
import { FLUSH_NOTICES, LIST_EVENTS } from './operational-events.js';
import { LAST_ERROR_TIMES, PARTNER_ACTIVITY } from './portal-activity.js';
import { INSERT_CALLBACKS } from './recording.js';
import { ASK_PROBE, DUE_NOW, LOCK_FOR_REDELIVERY, LOCK_OPEN_DESTINATION, RESTART } from './repairs.js';
import { countStatement, replayStatement } from './replay.js';
import { DELIVERIES_UNDER_WAY, PRUNE_CALLBACKS, PRUNE_PLANNER, PRUNE_UNSENT_EVENTS } from './retention.js';
import { recordFor, saveFor } from './settlement.js';
import {
  INSERT_TEST_CALLBACK,
  INSERT_TEST_EVENT,
  LOCK_TESTS,
  OPEN_CIRCUIT_OF,
  RECENT_TESTS,
} from './test-callbacks.js';
import { MOVE_URL, REMOVE_URL } from './url-changes.js';
import { LAST_DELIVERIES } from './url-deliveries.js';
import { ANNOUNCE_SLOTS, WITHDRAW_SLOTS } from './worker-slots.js';

/**
 * A bulk redelivery's selection with every condition, for the snapshots (each condition is left out when not
 * given).
 */
const EVERY_CONDITION = { partnerId: 'p', companyId: 'c', since: new Date(0), until: new Date(0), origin: 'o' };

/**
 * The connection a statement runs on: one of the leading relay's (its passes' or its sweep's, both
 * relayClient's: planner settings of SqlPool's, a deadline per statement), one of SqlPool's
 * (PLANNER_SETTINGS, prepared by name), or the ORM's (inside TransactionRunner.transaction or a read of the
 * data source: planned for its values).
 */
export type Connection = 'relay' | 'sql-pool' | 'orm';

export interface StoreStatement {
  /** The name it is prepared under (or, unprepared, known by in the snapshots). */
  name: string;
  on: Connection;
  text: string;
  /** A statement run before it in its transaction (its planner's settings). */
  setup?: string;
}

const statement = (name: string, on: Connection, text: string, setup?: string): StoreStatement => ({
  name,
  on,
  text,
  ...(setup ? { setup } : {}),
});
const recordings = [
  { circuit: false, failures: false },
  { circuit: true, failures: false },
  { circuit: false, failures: true },
  { circuit: true, failures: true },
];

/** The statements by the part of the service that calls them (each group one snapshot file, queries/<group>.sql). */
export const STATEMENT_GROUPS: Record<string, StoreStatement[]> = {
  admission: [
    statement('admission-candidates', 'relay', CANDIDATES),
    statement('admission-admit', 'relay', ADMIT),
    statement('admission-admit-probes', 'relay', ADMIT_PROBES),
    statement('admission-clear-asks', 'relay', CLEAR_ASKS),
    statement('admission-release', 'relay', RELEASE),
    statement('admission-lapse', 'relay', LAPSE),
    statement('admission-open', 'relay', OPEN_DESTINATIONS),
    statement('admission-expire', 'relay', EXPIRE),
    statement('admission-flush-notices', 'relay', FLUSH_NOTICES),
  ],
  delivery: [
    statement('callback-delivery-load', 'sql-pool', LOAD),
    statement('settlement-read', 'sql-pool', READ_DESTINATIONS),
    ...recordings.map((r) => ({ ...recordFor(r), on: 'sql-pool' as const })),
    { ...saveFor({ circuit: false }), on: 'sql-pool' },
    { ...saveFor({ circuit: true }), on: 'sql-pool' },
    statement('worker-slots-announce', 'sql-pool', ANNOUNCE_SLOTS),
    statement('worker-slots-withdraw', 'sql-pool', WITHDRAW_SLOTS),
  ],
  recording: [
    statement('callbacks-insert', 'orm', INSERT_CALLBACKS),
    statement('test-callbacks-lock', 'orm', LOCK_TESTS),
    statement('test-callbacks-recent', 'orm', RECENT_TESTS),
    statement('test-callbacks-open-circuit', 'orm', OPEN_CIRCUIT_OF),
    statement('test-callbacks-insert', 'orm', INSERT_TEST_CALLBACK),
    statement('test-events-insert', 'orm', INSERT_TEST_EVENT),
  ],
  repairs: [
    statement('redelivery-lock-destination', 'orm', LOCK_OPEN_DESTINATION),
    statement('redelivery-lock', 'orm', LOCK_FOR_REDELIVERY),
    statement('redelivery-ask-probe', 'orm', ASK_PROBE),
    statement('redelivery-restart', 'orm', RESTART),
    statement('callbacks-due-now', 'orm', DUE_NOW),
    statement('replay-failed', 'orm', replayStatement(EVERY_CONDITION, 100).text),
    statement('replay-count', 'orm', countStatement(EVERY_CONDITION, 100).text),
    statement('url-move', 'orm', MOVE_URL),
    statement('url-remove', 'orm', REMOVE_URL),
    statement('destinations-probe-now', 'orm', PROBE_NOW),
    statement('destinations-known', 'orm', KNOWN),
  ],
  reads: [
    statement('callback-feed-page', 'sql-pool', FEED_PAGE),
    statement('partner-activity', 'sql-pool', PARTNER_ACTIVITY),
    statement('partner-last-error-times', 'sql-pool', LAST_ERROR_TIMES),
    statement('operational-events-list', 'orm', LIST_EVENTS),
    statement('destinations-list', 'orm', LIST_DESTINATIONS),
    statement('callbacks-open-circuits', 'orm', OPEN_CIRCUITS),
    statement('destinations-states', 'orm', DESTINATION_STATES),
    statement('callback-urls-last-delivered', 'orm', LAST_DELIVERIES),
    statement('destinations-count-open', 'orm', COUNT_OPEN),
    statement('destinations-waiting-by-circuit', 'orm', WAITING_BY_CIRCUIT),
    statement('callbacks-gauge', 'sql-pool', COUNT_PENDING_AND_FAILED),
    statement('delivery-state', 'orm', STATE),
    statement('destinations-by-partner', 'orm', DESTINATIONS_BY_PARTNER),
    statement('destinations-longest-open', 'orm', LONGEST_OPEN),
  ],
  dashboard: [
    statement('dashboard-counts', 'orm', COUNTS),
    ...DASHBOARD_TABS.map((tab) => statement(`dashboard-page-${tab}`, 'orm', PAGES[tab])),
    statement('dashboard-job', 'orm', ONE_ROW),
    statement('dashboard-log', 'orm', LOG),
    statement('dashboard-delayed-ids', 'orm', DELAYED_IDS),
  ],
  retention: [
    statement('retention-prune', 'sql-pool', PRUNE_CALLBACKS, PRUNE_PLANNER),
    statement('retention-prune-unsent-events', 'sql-pool', PRUNE_UNSENT_EVENTS),
    statement('retention-deliveries-under-way', 'sql-pool', DELIVERIES_UNDER_WAY),
  ],
};

export const STORE_STATEMENTS: StoreStatement[] = Object.values(STATEMENT_GROUPS).flat();

/** The statement of that name; throws for a name the store has not. */
export function storeStatement(name: string): StoreStatement {
  const found = STORE_STATEMENTS.find((s) => s.name === name);
  if (!found) throw new Error(`the callback store has no statement named ${name}`);
  return found;
}

/** The bulk redelivery's statement for a selection (its conditions are only those given) and its parameters. */
export { replayStatement };
