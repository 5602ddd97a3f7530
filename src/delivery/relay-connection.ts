import { Client } from 'pg';
import { PLANNER_SETTINGS } from '../platform/index.js';

/**
 * A relay statement or connect that has not answered in this long means the connection went
 * silent (a network partition, a server that stopped answering; no reset ever comes): the
 * connection is dropped and made again (the leader's: and leadership with it). A pass takes milliseconds: its
 * statement probes an index per destination, whatever the backlog (docs/architecture.md, "Admission").
 */
export const RELAY_TIMEOUT_MS = 10_000;
/**
 * Asks PostgreSQL to end the relay's session once its client is unreachable: keepalive probes
 * after 10 s idle, three 5 s apart, and at most 20 s of unacknowledged data. Otherwise a
 * partitioned leader's session, and the advisory lock it holds, outlive it by the operating
 * system's defaults (hours), and no standby can lead meanwhile. (Ignored over a Unix socket.)
 */
const SERVER_SIDE_TIMEOUTS =
  '-c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3 -c tcp_user_timeout=20000';

/**
 * A connection of the relay's (its own, and its sweep's: timer-sweep.ts): no connect waits past
 * RELAY_TIMEOUT_MS (its statements have the same deadline, sessionWithDeadline), PostgreSQL ends
 * the session of a client it cannot reach (SERVER_SIDE_TIMEOUTS), and a pass's commit lost to a
 * database crash (`synchronous_commit = off`) only means its rows are admitted again when their
 * leases lapse.
 * No sequential or bitmap scans, as on every connection of hand-written SQL (PLANNER_SETTINGS). Bitmap scans here
 * especially: every callback passes through `sending`, so that partial index holds many dead
 * entries until vacuum; a bitmap scan visits each one's heap page on every pass, a plain index
 * scan marks them dead once and skips them after.
 * No JIT either (PLANNER_SETTINGS): a pass runs many times a second, and a generic plan's row
 * estimates (a `LIMIT` it cannot know counts as a tenth of the table) priced it past
 * `jit_above_cost`: compiling would cost many times the pass itself.
 * No sorts: every relay statement reads a destination's callbacks in the order of an index and
 * stops at its limit; a plan that sorts them has read them all first. With statistics that put
 * one row behind each destination, the planner priced sorting a destination's pending callbacks
 * read from the expiry's index (`callbacks_pending_schedule_idx`, narrower) below reading them in
 * order from admission's, and kept that plan as the table grew.
 */
export function relayClient(databaseUrl: string): Client {
  return new Client({
    connectionString: databaseUrl,
    options: `${PLANNER_SETTINGS} -c synchronous_commit=off -c enable_sort=off ${SERVER_SIDE_TIMEOUTS}`,
    connectionTimeoutMillis: RELAY_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: RELAY_TIMEOUT_MS,
  });
}
