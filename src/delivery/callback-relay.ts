import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { Client } from 'pg';
import { AdmissionSignal, APP_CONFIG, AppConfig, CALLBACKS_CHANNEL, PLANNER_SETTINGS, RepeatLimitedLog, sessionWithDeadline, SqlSession, StatementTimeout } from '../platform/index.js';
import { Admission } from './admission.js';

/** Admission runs at least this often, whatever else wakes it (≤ 1 s: docs/architecture.md, "Delivery invariants", 2). */
export const ADMISSION_INTERVAL_MS = 1000;
/** The timer's period, as a provider: a test stops the timer to see what the wake-ups alone do. */
export const ADMISSION_INTERVAL = Symbol('ADMISSION_INTERVAL');
/**
 * The least time between the starts of two admission passes. A job costs Redis and its worker the
 * same whatever it carries; back-to-back passes under a steady flow each admitted the two or three
 * slots the last settlement freed. Counted from the start, not the end: a pass that took longer
 * (a thousand backlogs catching up) is followed at once, and a fresh callback that came during
 * it waits for no gap besides.
 */
const PASS_SPACING_MS = 5;
/** Any fixed number (migrations use 727_001, retention 727_002): one process at a time leads admission. */
const ADMISSION_LOCK = 727_003;
/**
 * A relay statement or connect that has not answered in this long means the connection went
 * silent (a network partition, a server that stopped answering; no reset ever comes): the
 * connection is dropped and made again, and leadership with it. A pass takes milliseconds: its
 * statement probes an index per destination, whatever the backlog (docs/architecture.md, "Admission").
 */
export const RELAY_TIMEOUT_MS = 10_000;
/**
 * Asks PostgreSQL to end the relay's session once its client is unreachable: keepalive probes
 * after 10 s idle, three 5 s apart, and at most 20 s of unacknowledged data. Otherwise a
 * partitioned leader's session, and the advisory lock it holds, outlive it by the operating
 * system's defaults (hours), and no standby can lead meanwhile. (Ignored over a Unix socket.)
 */
const SERVER_SIDE_TIMEOUTS = '-c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3 -c tcp_user_timeout=20000';

/** Where the relay stands: `reconnecting` (no connection), `standing-by` (connected, without the lock) or `leading`. */
type RelayState = 'reconnecting' | 'standing-by' | 'leading';

/**
 * The admission loop. Every process of role `api` or `all` runs one: it waits for a wake-up or the
 * timer, then takes one step for its state. The one holding the advisory lock on its own
 * PostgreSQL connection leads: it runs an admission pass on every wake-up (AdmissionSignal: this
 * process's commits and settlements; NOTIFY from the others), and on each tick regardless, with
 * the sweep first, so a due callback whose destination has room is admitted within a second
 * whatever restarted before. The others stand by and try the lock on each tick: when the leader's
 * connection ends (it stopped, died, lost PostgreSQL, went silent), one of them takes over.
 */
@Injectable()
export class CallbackRelay implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly log = new Logger('CallbackRelay');
  private readonly warnings = new RepeatLimitedLog((m) => this.log.warn(m));
  private state: RelayState = 'reconnecting';
  private conn: Client | null = null;
  /** `conn`'s statements, each with the RELAY_TIMEOUT_MS deadline. */
  private session: SqlSession | null = null;
  /** A wake-up came since the last pass began. */
  private woken = false;
  /** Ends the loop's wait early (set while it waits). */
  private alarm: (() => void) | null = null;
  private loop: Promise<void> | null = null;
  /** When the last admission (after the sweep, on a tick) started (performance.now()). */
  private lastAdmitStart = -Infinity;
  /** When the timer next ticks (performance.now()). */
  private tickAt = 0;
  private stopped = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(ADMISSION_INTERVAL) private readonly intervalMs: number,
    private readonly admission: Admission,
    private readonly signal: AdmissionSignal,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.reconnect();
    this.loop = this.run();
  }

  get isLeader(): boolean {
    return this.state === 'leading';
  }

  /** Stops admitting and lets the step under way end, before the workers drain. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.signal.lead(null);
    this.alarm?.();
    await this.loop;
  }

  /** Ends the connection, and with it the lock: a standby leads within a second. */
  async onApplicationShutdown(): Promise<void> {
    await this.conn?.end().catch(() => undefined);
  }

  /** An admission pass as soon as the loop is free (wake-ups meanwhile go together in one). */
  wake(): void {
    this.woken = true;
    this.alarm?.();
  }

  /** Wait for a wake-up or the timer, then one step; until the application stops. */
  private async run(): Promise<void> {
    this.tickAt = performance.now() + this.intervalMs;
    while (!this.stopped) {
      if (!this.woken) await this.waitUntil(this.tickAt);
      const tick = performance.now() >= this.tickAt;
      if (tick) this.tickAt = performance.now() + this.intervalMs;
      if (this.stopped) break;
      await this.step(tick).catch((e: Error) => this.warnings.warn(`admission loop: ${e.message}`)); // the loop never ends on an error
    }
  }

  private async step(tick: boolean): Promise<void> {
    if (this.state === 'reconnecting' && tick) await this.reconnect();
    else if (this.state === 'standing-by' && tick) await this.tryToLead();
    else if (this.state === 'leading') await this.pass(tick);
    else this.woken = false; // not leading: the leader's own wake-ups reach it by NOTIFY
  }

  private waitUntil(at: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.alarm?.(), Math.max(0, at - performance.now()));
      this.alarm = () => {
        this.alarm = null;
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /**
   * One pass, its admission at least PASS_SPACING_MS after the last one's: the sweep first on a tick (the connection
   * takes one statement at a time), then admission. After a failure the next tick tries again.
   */
  private async pass(tick: boolean): Promise<void> {
    const wait = this.lastAdmitStart + PASS_SPACING_MS - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (this.state !== 'leading' || this.stopped) return; // the connection was lost meanwhile
    this.woken = false; // what woke the loop so far is seen by this pass
    const conn = this.conn!;
    const session = this.session!;
    try {
      if (tick) {
        await this.admission.sweep(session).catch((e: Error) => this.failed(conn, 'admission sweep failed', e));
        if (this.state !== 'leading') return; // the sweep timed out and ended the connection
      }
      this.lastAdmitStart = performance.now();
      await this.admission.admit(session);
    } catch (e) {
      this.woken = false;
      this.failed(conn, 'admission pass failed, trying again within a second', e as Error);
    }
  }

  private async tryToLead(): Promise<void> {
    const conn = this.conn!;
    try {
      const { rows } = await this.session!.query<{ locked: boolean }>({ text: 'SELECT pg_try_advisory_lock($1) AS locked', values: [ADMISSION_LOCK] });
      if (!rows[0].locked || this.stopped || this.conn !== conn) return;
      this.enter('leading');
      this.woken = true; // a pass at once: whatever waits is admitted now
    } catch (e) {
      this.failed(conn, 'cannot take the admission lock', e as Error);
    }
  }

  private enter(state: RelayState): void {
    this.state = state;
    this.signal.lead(state === 'leading' ? this : null);
  }

  /** Logs a failed statement; one past RELAY_TIMEOUT_MS (StatementTimeout) ends the silent connection, and leadership with it. */
  private failed(conn: Client, what: string, e: Error): void {
    this.warnings.warn(`${what}: ${e.message}`);
    if (e instanceof StatementTimeout) this.lost(conn);
  }

  /** `client` is gone (an error, its end, a silent statement): the loop reconnects on its next tick. */
  private lost(client: Client): void {
    if (this.conn !== client) return;
    this.conn = null;
    this.session = null;
    this.enter('reconnecting');
    client.end().catch(() => undefined);
  }

  /** A new connection listening for NOTIFY, then a try for the lock; on failure the next tick tries again. */
  private async reconnect(): Promise<void> {
    const client = relayClient(this.config.databaseUrl);
    const session = sessionWithDeadline(client, RELAY_TIMEOUT_MS);
    client.on('notification', () => this.wake());
    client.on('error', (e) => {
      this.warnings.warn(`relay connection lost, reconnecting: ${e.message}`);
      this.lost(client);
    });
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await session.query({ text: `LISTEN ${CALLBACKS_CHANNEL}` });
    } catch (e) {
      this.warnings.warn(`relay cannot reach PostgreSQL, retrying: ${(e as Error).message}`);
      client.end().catch(() => undefined);
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.conn = client;
    this.session = session;
    this.enter('standing-by');
    await this.tryToLead();
  }
}

/**
 * The relay's connection: no connect waits past RELAY_TIMEOUT_MS (its statements have the same
 * deadline, sessionWithDeadline), PostgreSQL ends the session of a client it cannot reach
 * (SERVER_SIDE_TIMEOUTS), and a pass's commit lost to a database crash (`synchronous_commit = off`)
 * only means its rows are admitted again when their leases lapse.
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
