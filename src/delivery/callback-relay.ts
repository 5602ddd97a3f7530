import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Client } from 'pg';
import { DataSource, EntitySubscriberInterface, TransactionCommitEvent, TransactionRollbackEvent } from 'typeorm';
import { CALLBACKS_CHANNEL, RECORDED } from '../callbacks/callback-recorder.js';
import { RepeatLimitedLog } from '../common/repeat-limited-log.js';
import { APP_CONFIG, AppConfig } from '../config/app-config.js';
import { Admission } from './admission.js';
import { AdmissionSignal } from './admission-signal.js';
import { CallbackQueue } from './callback-queue.js';

/** Admission runs at least this often, whatever else wakes it (≤ 1 s: docs/architecture.md, "Delivery invariants", 2). */
export const ADMISSION_INTERVAL_MS = 1000;
const RECONNECT_MS = 1000;
/**
 * The least time between the end of an admission pass and the start of the next. A job costs Redis
 * and its worker the same whatever it carries; back-to-back passes under a steady flow each
 * admitted the two or three slots the last settlement freed.
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
/** pg's error for a statement past its `query_timeout`: the client keeps the connection, the relay does not. */
const QUERY_TIMEOUT_ERROR = 'Query read timeout';
/**
 * Asks PostgreSQL to end the relay's session once its client is unreachable: keepalive probes
 * after 10 s idle, three 5 s apart, and at most 20 s of unacknowledged data. Otherwise a
 * partitioned leader's session, and the advisory lock it holds, outlive it by the operating
 * system's defaults (hours), and no standby can lead meanwhile. (Ignored over a Unix socket.)
 */
const SERVER_SIDE_TIMEOUTS = '-c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3 -c tcp_user_timeout=20000';

/**
 * The admission loop. Every process of role `api` or `all` runs one; the one holding the
 * advisory lock on its own PostgreSQL connection leads: it runs an admission pass on every
 * commit that recorded callbacks, on every NOTIFY (settlements and redeliveries elsewhere), on
 * every wake-up of this process, and each second regardless, so a due callback whose destination
 * has room is admitted within a second whatever restarted before. The others stand by and try
 * the lock each second: when the leader's connection ends (it stopped, died, lost PostgreSQL),
 * one of them takes over.
 *
 * The connection runs with `synchronous_commit = off`: a pass lost to a database crash only
 * means its rows are admitted again (their leases lapse).
 */
@Injectable()
export class CallbackRelay implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly log = new Logger('CallbackRelay');
  private readonly warnings = new RepeatLimitedLog((m) => this.log.warn(m));
  private conn: Client | null = null;
  /** Drops `conn` and makes a new connection (set with it by connect()). */
  private reconnect: (() => void) | null = null;
  private leading = false;
  /** The timer's sweep is due: the next pass runs it first (the connection takes one statement at a time). */
  private sweepDue = false;
  /** A try for the lock is under way: the timer skips its next until it ends. */
  private trying = false;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private lastPassEnd = 0;
  private stopped = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly db: DataSource,
    private readonly admission: Admission,
    private readonly signal: AdmissionSignal,
    private readonly queue: CallbackQueue,
  ) {}

  async onModuleInit(): Promise<void> {
    this.db.subscribers.push(this.afterCommit);
    await this.connect();
    this.timer = setInterval(() => this.tick(), ADMISSION_INTERVAL_MS);
  }

  /** Whether this process leads admission now. */
  get isLeader(): boolean {
    return this.leading;
  }

  /** Stops admitting and lets the pass under way end, before the workers drain. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    const i = this.db.subscribers.indexOf(this.afterCommit);
    if (i >= 0) this.db.subscribers.splice(i, 1);
    if (this.timer) clearInterval(this.timer);
    this.signal.lead(null);
    await this.running?.catch(() => undefined);
  }

  /** Ends the connection, and with it the lock: a standby leads within a second. */
  async onApplicationShutdown(): Promise<void> {
    await this.conn?.end().catch(() => undefined);
  }

  /**
   * Wakes admission once a transaction that recorded callbacks has committed (TypeORM also
   * reports a savepoint's release as a commit: the transaction is still active then).
   */
  private readonly afterCommit: EntitySubscriberInterface = {
    afterTransactionCommit: (e: TransactionCommitEvent) => {
      if (e.queryRunner.isTransactionActive || !e.queryRunner.data?.[RECORDED]) return;
      delete e.queryRunner.data[RECORDED];
      this.signal.wake();
    },
    afterTransactionRollback: (e: TransactionRollbackEvent) => {
      if (!e.queryRunner.isTransactionActive && e.queryRunner.data) delete e.queryRunner.data[RECORDED];
    },
  };

  /**
   * An admission pass now, or right after the one under way: wake-ups in a burst coalesce. Passes
   * start at least PASS_SPACING_MS after the last one ended, so the room that settlements free
   * meanwhile goes out together, in bigger jobs.
   */
  private readonly pass = (): void => {
    if (this.stopped || !this.leading) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        const wait = this.lastPassEnd + PASS_SPACING_MS - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        this.again = false;
        if (this.stopped || !this.leading || !(await this.sweepAndAdmit())) break;
      } while (this.again && !this.stopped);
    })().finally(() => {
      this.running = null;
    });
  };

  /**
   * One pass: the sweep first when the timer asked for one (the connection takes one statement at
   * a time), then admission. False when admission failed: the timer tries again within a second.
   */
  private async sweepAndAdmit(): Promise<boolean> {
    const conn = this.conn;
    try {
      if (!conn) throw new Error('the relay is reconnecting to PostgreSQL');
      if (this.sweepDue) {
        this.sweepDue = false;
        await this.admission.sweep(conn).catch((e: Error) => this.failed(conn, 'admission sweep failed', e));
        // A sweep past its timeout ended the connection: nothing to admit on until the next one.
        if (conn !== this.conn) return false;
      }
      await this.admission.admit(conn);
      return true;
    } catch (e) {
      this.failed(conn, 'admission pass failed, trying again within a second', e as Error);
      return false;
    } finally {
      this.lastPassEnd = performance.now();
    }
  }

  /** Each second: lead if nobody does; as the leader, sweep (lapsed leases, outages) and admit. */
  private tick(): void {
    if (this.stopped || !this.conn) return;
    if (!this.leading) {
      void this.tryToLead();
      return;
    }
    this.sweepDue = true;
    this.pass();
  }

  private async tryToLead(): Promise<void> {
    const conn = this.conn;
    if (!conn || this.trying) return;
    this.trying = true;
    try {
      const { rows } = await conn.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [ADMISSION_LOCK]);
      if (!rows[0].locked || this.stopped || this.conn !== conn) return;
      this.leading = true;
      this.signal.lead(this.pass);
      await this.queue.dropLegacyJobs().catch((e: Error) => this.warnings.warn(`cannot drop v1 jobs from Redis yet: ${e.message}`));
      this.pass();
    } catch (e) {
      this.failed(conn, 'cannot take the admission lock', e as Error);
    } finally {
      this.trying = false;
    }
  }

  /**
   * Logs a failed statement. One past RELAY_TIMEOUT_MS means the connection is silent: pg fails
   * the statement but keeps the connection, so it is ended here, and leadership with it (a standby
   * takes the lock once PostgreSQL ends the session, see SERVER_SIDE_TIMEOUTS); this process
   * connects again and stands by.
   */
  private failed(conn: Client | null, what: string, e: Error): void {
    this.warnings.warn(`${what}: ${e.message}`);
    if (e.message === QUERY_TIMEOUT_ERROR && conn === this.conn) this.reconnect?.();
  }

  /**
   * The relay's own connection. Lost or never made (PostgreSQL restarting, unreachable), it is
   * tried again every second; leadership goes with it.
   */
  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = relayClient(this.config.databaseUrl);
    client.on('notification', () => this.pass());
    let lost = false;
    const retry = () => {
      if (lost) return;
      lost = true;
      if (this.conn === client) {
        this.conn = null;
        this.reconnect = null;
        this.leading = false;
        this.signal.lead(null);
      }
      client.end().catch(() => undefined);
      if (!this.stopped) setTimeout(() => void this.connect(), RECONNECT_MS).unref();
    };
    client.on('error', (e) => {
      this.warnings.warn(`relay connection lost, reconnecting: ${e.message}`);
      retry();
    });
    client.on('end', retry);
    try {
      await client.connect();
      await client.query(`LISTEN ${CALLBACKS_CHANNEL}`);
    } catch (e) {
      this.warnings.warn(`relay cannot reach PostgreSQL, retrying: ${(e as Error).message}`);
      retry();
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.conn = client;
    this.reconnect = retry;
    await this.tryToLead();
  }
}

/**
 * The relay's connection: no statement or connect waits past RELAY_TIMEOUT_MS, PostgreSQL ends the
 * session of a client it cannot reach (SERVER_SIDE_TIMEOUTS), and a lost commit only re-admits.
 * No bitmap scans: every callback passes through `sending`, so that partial index holds many dead
 * entries until vacuum; a bitmap scan visits each one's heap page on every pass (3-5 ms
 * mid-drain), a plain index scan marks them dead once and skips them after (about 1 ms).
 */
export function relayClient(databaseUrl: string): Client {
  return new Client({
    connectionString: databaseUrl,
    options: `-c synchronous_commit=off -c enable_bitmapscan=off ${SERVER_SIDE_TIMEOUTS}`,
    query_timeout: RELAY_TIMEOUT_MS,
    connectionTimeoutMillis: RELAY_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: RELAY_TIMEOUT_MS,
  });
}
