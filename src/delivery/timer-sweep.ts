import { Client } from 'pg';
import { sessionWithDeadline, SqlSession } from '../platform/index.js';
import { Admission } from './admission.js';
import { relayClient, RELAY_TIMEOUT_MS } from './relay-connection.js';

/**
 * The leader's sweep (Admission.sweep), started on each tick of its timer, on a connection of its
 * own: a pass never waits for it, though a sweep takes tens of milliseconds while many backlogs
 * drain and its LAPSE may wait on a row lock another transaction holds. One sweep at a time: a tick
 * that finds one under way starts none. Each of its statements and its connect has the relay's
 * deadline (RELAY_TIMEOUT_MS), so a sweep ends within a few of them whatever PostgreSQL does; any
 * failure ends the connection, and the next tick makes a new one. When it ends, `after` wakes
 * admission, whose next pass reads every destination from its head (Admission.sweep): what the
 * sweep returned to waiting goes out then.
 * It may outlive the leadership it started under: every sweep statement is safe beside another
 * process's (row locks, conditions checked again under them).
 */
export class TimerSweep {
  private client: Client | null = null;
  private session: SqlSession | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly databaseUrl: string,
    private readonly admission: Admission,
    private readonly warn: (message: string) => void,
    private readonly after: () => void,
  ) {}

  /** Starts a sweep, unless one is under way. */
  start(): void {
    this.running ??= this.sweep().finally(() => {
      this.running = null;
      this.after();
    });
  }

  /** Waits for the sweep under way, then ends the connection. */
  async stop(): Promise<void> {
    await this.running;
    await this.drop();
  }

  private async sweep(): Promise<void> {
    try {
      await this.admission.sweep(this.session ?? (await this.connect()));
    } catch (e) {
      this.warn(`admission sweep failed, again on the next tick: ${(e as Error).message}`);
      await this.drop();
    }
  }

  private async connect(): Promise<SqlSession> {
    const client = relayClient(this.databaseUrl);
    client.on('error', () => this.client === client && void this.drop()); // lost: the next sweep makes a new one
    this.client = client;
    await client.connect();
    this.session = sessionWithDeadline(client, RELAY_TIMEOUT_MS);
    return this.session;
  }

  private async drop(): Promise<void> {
    const client = this.client;
    this.client = null;
    this.session = null;
    await client?.end().catch(() => undefined);
  }
}
