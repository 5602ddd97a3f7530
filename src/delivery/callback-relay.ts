import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import { Client } from 'pg';
import {
  AdmissionSignal,
  APP_CONFIG,
  AppConfig,
  RepeatLimitedLog,
  sessionWithDeadline,
  SqlSession,
  StatementTimeout,
} from '../platform/index.js';
import { Admission } from './admission.js';
import { relayClient, RELAY_TIMEOUT_MS } from './relay-connection.js';
import { RelayRepository } from './relay.repository.js';
import { TimerSweep } from './timer-sweep.js';

/**
 * Admission runs at least this often, whatever else wakes it
 * (≤ 1 s: docs/architecture.md, "Delivery invariants", 2).
 */
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

/** Where the relay stands: `reconnecting` (no connection), `standing-by` (connected, without the lock) or `leading`. */
type RelayState = 'reconnecting' | 'standing-by' | 'leading';

/**
 * The admission loop. Every process of role `api` or `all` runs one: it waits for a wake-up or the
 * timer, then takes one step for its state. The one holding the advisory lock on its own
 * PostgreSQL connection leads: it runs an admission pass on every wake-up (AdmissionSignal: this
 * process's commits and settlements; NOTIFY from the others), and on each tick regardless, which
 * also starts the sweep (TimerSweep; a pass follows its end), so a due callback whose destination
 * has room is admitted within a second whatever restarted before. The others stand by and try
 * the lock on each tick: when the leader's connection ends (it stopped, died, lost PostgreSQL,
 * went silent), one of them takes over.
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
  /** When the last pass started (performance.now()). */
  private lastPassStart = -Infinity;
  /** When the timer next ticks (performance.now()). */
  private tickAt = 0;
  private stopped = false;
  /** The leader's sweep, started by each tick on a connection of its own; a pass follows it. */
  private readonly sweep: TimerSweep;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(ADMISSION_INTERVAL) private readonly intervalMs: number,
    private readonly admission: Admission,
    private readonly signal: AdmissionSignal,
    private readonly statements: RelayRepository,
  ) {
    this.sweep = new TimerSweep(
      config.databaseUrl,
      admission,
      (m) => this.warnings.warn(m),
      () => this.wake(),
    );
  }

  async onModuleInit(): Promise<void> {
    await this.reconnect();
    this.loop = this.run();
  }

  get isLeader(): boolean {
    return this.state === 'leading';
  }

  /** Stops admitting and lets the step and the sweep under way end, before the workers drain. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.signal.lead(null);
    this.alarm?.();
    await this.loop;
    await this.sweep.stop();
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
      // the loop never ends on an error
      await this.step(tick).catch((e: Error) => this.warnings.warn(`admission loop: ${e.message}`));
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
   * One pass, at least PASS_SPACING_MS after the last one's start; a tick starts the sweep beside
   * it (TimerSweep). After a failure the next tick tries again.
   */
  private async pass(tick: boolean): Promise<void> {
    const wait = this.lastPassStart + PASS_SPACING_MS - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (this.state !== 'leading' || this.stopped) return; // the connection was lost meanwhile
    this.woken = false; // what woke the loop so far is seen by this pass
    const conn = this.conn!;
    const session = this.session!;
    if (tick) this.sweep.start();
    try {
      this.lastPassStart = performance.now();
      await this.admission.admit(session);
    } catch (e) {
      this.woken = false;
      this.failed(conn, 'admission pass failed, trying again within a second', e as Error);
    }
  }

  private async tryToLead(): Promise<void> {
    const conn = this.conn!;
    try {
      const locked = await this.statements.tryLock(this.session!);
      if (!locked || this.stopped || this.conn !== conn) return;
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

  /**
   * Logs a failed statement; one past RELAY_TIMEOUT_MS (StatementTimeout) ends the silent connection,
   * and leadership with it.
   */
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
      await this.statements.listen(session);
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
