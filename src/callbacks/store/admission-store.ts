import { Injectable } from '@nestjs/common';
import type { SqlSession } from '../../platform/index.js';
import { ADMIT, ADMIT_PROBES, CANDIDATES, CLEAR_ASKS, EXPIRE, LAPSE, OPEN_DESTINATIONS, RELEASE } from './admission.js';
import type { DestinationColumns, DestinationRow } from './destination-states.js';
import { FLUSH_NOTICES } from './operational-events.js';

/**
 * Where each destination's read starts (delivery/admission-floors.ts): three arrays by destination, and the
 * idle floor.
 */
export interface CandidateFloors {
  keys: string[];
  at: string[];
  seq: string[];
  idle: string | null;
}

/** Callbacks in flight of one class of destinations (CANDIDATES' `flight`), waiting as `CandidateRow.waiting`. */
export interface InFlight {
  proven: boolean;
  failing: boolean;
  sending: number;
  waiting: number;
}

/** A destination a pass read with a callback due (admission.ts, CANDIDATES). */
export type CandidateRow = DestinationColumns &
  Pick<DestinationRow, 'key' | 'probe_id'> & {
    sending: number;
    /** Of those, the ones admitted long enough ago to wait on an answer (candidates' `waitingLeases`). */
    waiting: number;
    /** Its oldest due callback (epoch ms). */
    oldest_due: number;
    worker_slots: number;
    workers: number;
    /** PostgreSQL's clock (epoch ms). */
    now: number;
    floor_at: string;
    floor_seq: string;
    idle_floor: string;
    /** Every destination's callbacks in flight (those read or not, due or not), by class: the same on every row. */
    flight: InFlight[];
  };

/** One destination's share of a round: how many of its due callbacks to admit, from its floor. */
export interface AdmitPlan {
  key: string;
  n: number;
  at: string | null;
  seq: string | null;
}

/** An open destination's probe a redelivery asked for (its probe_id). */
export interface AskedProbe {
  key: string;
  probe: string;
}

/** An admitted callback; `lease` is the same for every row of a round (now() is the statement's). */
export type AdmittedRow = { id: string; destination: string; attempt_count: number; created_at: Date; lease: string };

/** An open destination, for the sweep's expiry. */
export type OpenDestination = { key: string; origin: string; opened_at: number; last_error: string | null };

/**
 * Admission's statements. They run on the connection of the relay that leads admission (its
 * SqlSession, each statement with a deadline): leadership is that connection's, so the caller
 * passes it (the sweep's, lapse to flushNotices, go on another with the same settings); its
 * planner settings are SqlPool's (database.ts, PLANNER_SETTINGS), under which the plans tests
 * check these statements. Each is prepared under its own name.
 */
@Injectable()
export class AdmissionStore {
  /**
   * The destinations that may take a callback now and have one due, each read from its floor, but those `skipped`;
   * and on each row every destination's callbacks in flight by class (`provenForMs`: destination-window.ts's
   * PROVEN_FOR_MS). `waitingLeases` (ms): a callback in flight whose lease ends before now() plus this counts as
   * `waiting`.
   */
  async candidates(
    conn: SqlSession,
    f: CandidateFloors,
    skipped: ReadonlySet<string>,
    waitingLeases: number,
    provenForMs: number,
  ): Promise<CandidateRow[]> {
    return (
      await conn.query<CandidateRow>({
        name: 'admission-candidates',
        text: CANDIDATES,
        values: [f.keys, f.at, f.seq, f.idle, [...skipped], waitingLeases, provenForMs],
      })
    ).rows;
  }

  /**
   * One round: each destination's oldest due callbacks, as many as planned, become `sending` under a lease of
   * `leaseMs`.
   */
  async admit(conn: SqlSession, plan: AdmitPlan[], leaseMs: number): Promise<AdmittedRow[]> {
    const values = [
      plan.map((p) => p.key),
      plan.map((p) => p.n),
      leaseMs,
      plan.map((p) => p.at),
      plan.map((p) => p.seq),
    ];
    return (await conn.query<AdmittedRow>({ name: 'admission-admit', text: ADMIT, values })).rows;
  }

  /** The probes redeliveries asked for, each still waiting at its destination, become `sending` under a lease. */
  async admitProbes(conn: SqlSession, asked: AskedProbe[], leaseMs: number): Promise<AdmittedRow[]> {
    const values = [asked.map((a) => a.key), asked.map((a) => a.probe), leaseMs];
    return (await conn.query<AdmittedRow>({ name: 'admission-admit-probes', text: ADMIT_PROBES, values })).rows;
  }

  /**
   * The probe requests these destinations' admitted probes answered (each the probe_id CANDIDATES
   * read), unless another came since.
   */
  async clearAsks(conn: SqlSession, answered: AskedProbe[]): Promise<void> {
    const values = [answered.map((a) => a.key), answered.map((a) => a.probe)];
    await conn.query({ name: 'admission-clear-asks', text: CLEAR_ASKS, values });
  }

  /** Admitted callbacks whose jobs Redis refused: back to waiting, as they were (unprepared: a rare path). */
  async release(conn: SqlSession, ids: string[]): Promise<void> {
    await conn.query({ text: RELEASE, values: [ids] });
  }

  /** Leases that ran out back to waiting, no attempt spent; how many. */
  async lapse(conn: SqlSession): Promise<number> {
    return (await conn.query({ name: 'admission-lapse', text: LAPSE })).rowCount ?? 0;
  }

  async openDestinations(conn: SqlSession): Promise<OpenDestination[]> {
    return (await conn.query<OpenDestination>({ name: 'admission-open', text: OPEN_DESTINATIONS })).rows;
  }

  /**
   * The callbacks of these open destinations whose schedule (`scheduleTotalMs`) ended while they
   * waited become `failed`, each with its destination's error; how many.
   */
  async expire(conn: SqlSession, scheduleTotalMs: number, open: { key: string; error: string }[]): Promise<number> {
    const values = [scheduleTotalMs, open.map((d) => d.key), open.map((d) => d.error)];
    return (await conn.query({ name: 'admission-expire', text: EXPIRE, values })).rowCount ?? 0;
  }

  /** The `callbacks.failed` windows that are over tell what they held back. */
  async flushNotices(conn: SqlSession): Promise<void> {
    await conn.query({ name: 'admission-flush-notices', text: FLUSH_NOTICES });
  }
}
