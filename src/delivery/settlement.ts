import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  AdmissionSignal,
  APP_CONFIG,
  AppConfig,
  isDataError,
  Lru,
  RepeatLimitedLog,
  SerialBatcher,
} from '../platform/index.js';
import { Metrics } from '../operations/index.js';
import { type AttemptRecord, originOfKey, SettlementStore } from '../callbacks/index.js';
import { DestinationWrite, savesOf, stateOf } from './destination-store.js';
import { newDestination, WindowConfig, windowConfigOf } from './destination-window.js';
import { Attempt, settleAttempt, SettledAttempt } from './settle-attempt.js';
import { RetryPolicy } from './retry-policy.js';

/** Attempts' outcomes folded into their destinations, and the destinations' writes. */
type Folded = { settled: SettledAttempt[]; writes: Map<string, DestinationWrite> };

/** Times a destination's fold is tried again over a newer version before its outcomes are dropped. */
const REFOLDS = 10;
/** Attempts settled in one statement at most. */
const SETTLE_BATCH = 500;
/**
 * Destinations remembered at most, the least recently settled forgotten first (read again when
 * next settled); more than a batch's, which is read and then folded over what was read.
 */
const KNOWN_MAX = 2 * SETTLE_BATCH;

/** How long an answer waits for others to settle with: one statement, and one admission pass woken, for them all. */
const SETTLE_GATHER_MS = 3;

/** How long a worker keeps trying to record an outcome PostgreSQL does not take (an outage). */
const RECORD_PATIENCE_MS = 60_000;
const RECORD_RETRY_MS = 500;

/**
 * Settles attempts in batches: folds every outcome into its destination's window and breaker
 * (as last known here, read when not), and writes attempts, callbacks and destinations in one
 * statement, each destination over the version it was known at (no lock is held). A destination
 * written elsewhere in between is read and folded again. Then admission is woken: the room just
 * freed is used within a pass.
 */
@Injectable()
export class Settlement {
  private readonly log = new Logger('Destinations');
  private readonly warnings = new RepeatLimitedLog((m) => this.log.warn(m));
  private readonly window: WindowConfig;
  private readonly policy: RetryPolicy;
  /**
   * The destinations as this process last read or wrote them: a busy destination's settlements
   * write without reading first.
   */
  private readonly known = new Lru<string, DestinationWrite>(KNOWN_MAX);
  /** PostgreSQL's clock minus this process's, as of the last read (the states are kept in PostgreSQL's). */
  private skew = 0;
  /**
   * One batch at a time (a busy destination's settlements would otherwise queue up on its row lock),
   * the answers meanwhile in the next.
   */
  private readonly batches = new SerialBatcher<Attempt, SettledAttempt | null>(
    (items) => this.settleMany(items),
    SETTLE_BATCH,
    SETTLE_GATHER_MS,
  );

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly metrics: Metrics,
    private readonly signal: AdmissionSignal,
    private readonly store: SettlementStore,
  ) {
    this.window = windowConfigOf(config);
    this.policy = new RetryPolicy(config.callbackRetryScheduleMs);
  }

  /** The attempt's outcome as recorded; null when PostgreSQL refused its record (settleAlone). */
  settle(a: Attempt): Promise<SettledAttempt | null> {
    return this.batches.call(a);
  }

  /** One batch; if PostgreSQL refuses it for what it holds, each attempt alone. */
  private async settleMany(items: Attempt[]): Promise<(SettledAttempt | null)[]> {
    if (items.length === 1) return [await this.settleAlone(items[0])];
    try {
      return await this.record(items);
    } catch (e) {
      if (!isDataError(e)) throw e;
      this.metrics.recordFailures.inc({ stage: 'batch' });
      this.warnings.warn(`attempt records refused as a batch, writing them one by one: ${(e as Error).message}`);
      return Promise.all(items.map((i) => this.settleAlone(i)));
    }
  }

  /**
   * One attempt, and once more without the receiver's text if PostgreSQL refuses it. Refused
   * again (its callback row deleted meanwhile, a constraint on another column), it is lost: counted,
   * logged naming the callback, and its callback left as it is for its lease to bring it back.
   * Never tried a third time: settlements queue behind this one (SerialBatcher).
   */
  private async settleAlone(a: Attempt): Promise<SettledAttempt | null> {
    for (const [stage, attempt] of [
      ['single', a],
      ['lost', withoutAnswerText(a)],
    ] as const) {
      try {
        return (await this.record([attempt]))[0];
      } catch (e) {
        if (!isDataError(e)) throw e;
        this.metrics.recordFailures.inc({ stage });
        if (stage === 'lost')
          this.log.error(
            `attempt ${a.row.attempt_count + 1} of callback ${a.row.id} not recorded, ` +
              `PostgreSQL refused it even without the answer's text (${(e as Error).message}); ` +
              'the callback is left to its lease',
          );
      }
    }
    return null;
  }

  /**
   * Writes the attempts, waiting out an outage for RECORD_PATIENCE_MS; after that the callbacks'
   * leases bring them back (at-least-once: they are sent again). A refusal for what the records
   * hold (isDataError) is thrown at once.
   */
  private async record(items: Attempt[]): Promise<SettledAttempt[]> {
    const deadline = Date.now() + RECORD_PATIENCE_MS;
    for (;;) {
      try {
        const settled = await this.write(items);
        this.signal.wake();
        return settled;
      } catch (e) {
        if (isDataError(e)) throw e;
        if (Date.now() > deadline) {
          this.metrics.recordFailures.inc({ stage: 'lost' });
          throw e;
        }
        this.warnings.warn(`cannot record attempts, trying again: ${(e as Error).message}`);
        await new Promise((r) => setTimeout(r, RECORD_RETRY_MS));
      }
    }
  }

  private async write(items: Attempt[]): Promise<SettledAttempt[]> {
    await this.read([...new Set(items.map((i) => i.row.destination))].filter((k) => this.mayBeStale(k)));
    const folded = this.fold(items);
    const written = await this.store.record(
      items.map((a, i) => attemptRecord(a, folded.settled[i])),
      savesOf(folded.writes),
    );
    await this.refold(this.commit(folded, written), items);
    return folded.settled;
  }

  /** The attempts' outcomes, in order, each over its destination as last folded or known here. */
  private fold(items: Attempt[]): Folded {
    const writes = new Map<string, DestinationWrite>();
    const settled = items.map((a) => {
      const key = a.row.destination;
      const current = writes.get(key) ?? this.known.get(key) ?? { state: newDestination(this.window), version: '0' };
      const s = settleAttempt(current.state, a, this.skew, this.policy, this.window);
      const reported = s.transition === 'opened' || s.transition === 'closed' ? s.transition : null;
      writes.set(key, {
        state: s.destination,
        version: current.version,
        reported: reported ?? writes.get(key)?.reported ?? null,
        failingSince: s.transition === 'closed' ? current.state.openedAt : (writes.get(key)?.failingSince ?? null),
      });
      return s;
    });
    return { settled, writes };
  }

  /**
   * What was written is what this process knows now, and its circuit transitions are logged; what
   * was not (written elsewhere meanwhile) is forgotten, and its keys returned to be folded again.
   */
  private commit({ settled, writes }: Folded, written: string[]): string[] {
    const saved = new Set(written);
    for (const [key, w] of writes) {
      if (saved.has(key)) this.known.set(key, { state: w.state, version: String(BigInt(w.version) + 1n) });
      else this.known.delete(key);
    }
    for (const s of settled) if (saved.has(s.key)) this.noteTransition(s);
    return [...writes.keys()].filter((k) => !saved.has(k));
  }

  /**
   * Whether a destination must be read before its outcomes are folded: one not known here, or one
   * known open. An open destination is written by others too (an operator's probe brings its next
   * probe forward), and its outcomes are few (its probe, attempts under way when it opened): read
   * first, a probe's answer closes the circuit in the statement that delivers it, instead of in a
   * refold after it, between which a reader would see the probe delivered and its circuit open.
   */
  private mayBeStale(key: string): boolean {
    const known = this.known.get(key);
    return known === undefined || known.state.openedAt !== null;
  }

  /** Reads destinations into `known`, and PostgreSQL's clock against this process's. */
  private async read(keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    const rows = await this.store.readDestinations(keys);
    for (const r of rows) this.known.set(r.key, { state: stateOf(r), version: r.version });
    if (rows.length > 0) this.skew = rows[0].now - Date.now();
  }

  /** Folds these destinations' outcomes again over what another process (or an operator's probe) wrote meanwhile. */
  private async refold(keys: string[], items: Attempt[]): Promise<void> {
    for (let i = 0; i < REFOLDS && keys.length > 0; i++) {
      await this.read(keys);
      const folded = this.fold(
        items.filter((a) => keys.includes(a.row.destination) && this.known.has(a.row.destination)),
      );
      keys = this.commit(folded, await this.store.save(savesOf(folded.writes)));
    }
    if (keys.length > 0)
      this.warnings.warn(
        `outcomes not folded into ${keys.map(destinationName).join(', ')}: ` +
          `written by other processes ${REFOLDS} times in a row`,
      );
  }

  private noteTransition({ key, transition, destination }: SettledAttempt): void {
    if (!transition) return;
    const name = destinationName(key);
    this.metrics.circuitTransitions.inc({ transition });
    const why = destination.lastError ? ` (last error: ${destination.lastError})` : '';
    if (transition === 'opened')
      this.log.warn(`circuit opened for ${name} after ${failuresText(destination.failures)}${why}`);
    if (transition === 'closed') this.log.log(`circuit closed for ${name}: a probe was answered`);
  }
}

/** A destination as a log line names it: its origin and its partner, never the key itself. */
function destinationName(key: string): string {
  return `${originOfKey(key)} (partner ${key.slice(0, key.indexOf(' '))})`;
}

/** An attempt and what it came to, as the store records them. */
function attemptRecord(a: Attempt, s: SettledAttempt): AttemptRecord {
  const { status, delayMs, lastError, keepsError, counts } = s;
  return {
    id: a.row.id,
    partnerId: a.row.partner_id,
    attemptCount: a.row.attempt_count,
    scheduleKey: a.row.schedule_key,
    startedAt: a.startedAt,
    durationMs: a.result.durationMs,
    statusCode: a.result.statusCode,
    error: a.result.error,
    responseBody: a.result.responseBody,
    sourceAddress: a.result.sourceAddress,
    ...s.place,
    requestHeaders: a.sent,
    responseStatus: a.result.answer?.status ?? null,
    responseHeaders: a.result.answer?.headers ?? null,
    fate: { status, delayMs, lastError, keepsError, counts },
    ifRedelivered: s.ifRedelivered,
    ifUrlRemoved: s.ifUrlRemoved,
  };
}

/** Last resort for one record PostgreSQL refused: keep the attempt and outcome, drop what the receiver sent. */
function withoutAnswerText(a: Attempt): Attempt {
  const plain = (v: string | null) => (v === null ? null : v.replace(/[^\x20-\x7e]/g, '?'));
  return { ...a, result: { ...a.result, responseBody: null, answer: null, error: plain(a.result.error) } };
}

/** "1 consecutive failure", "5 consecutive failures". */
const failuresText = (n: number): string => `${n} consecutive failure${n === 1 ? '' : 's'}`;
