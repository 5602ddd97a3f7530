import type { CandidateFloors } from '../callbacks/index.js';

/**
 * A position in `callbacks_admission_idx (destination, next_attempt_at, seq)`: the due time in
 * microseconds since the epoch (as microsKey writes it) and the insertion number, as text.
 */
export interface Floor {
  at: string;
  seq: string;
}

/**
 * The head of a destination's callbacks (the epoch, insertion 0): the floor of one left unread
 * (delivery/catch-up.ts) since the floors were forgotten. Without a floor it would start idle, as
 * if the last pass had read it and found nothing due, and its whole backlog would wait, unseen,
 * for the pass after the next sweep.
 */
const HEAD: Floor = { at: '0', seq: '0' };

/**
 * What a candidate row says of its destination's floor (a destination read with a callback due:
 * CANDIDATES returns no other); null: its callbacks were not read.
 */
export interface FloorRow {
  /** The destination's key. */
  key: string;
  floor_at: string | null;
  floor_seq: string | null;
  /** LATE_COMMIT before the pass (admission.ts): the floor of a closed destination that had nothing due. */
  idle_floor: string;
}

/**
 * Where each destination's due callbacks start, as the leader learnt it from its last pass. Every
 * callback admission takes leaves its index entry behind, dead until a vacuum; a pass starts each
 * destination's read at its floor instead of walking them all. A floor is the earlier of the
 * oldest due callback the last pass found and LATE_COMMIT before that pass (a transaction that
 * records callbacks commits within LATE_COMMIT of its start, so none of them can land below).
 * A closed destination the last pass found nothing due for starts LATE_COMMIT before it
 * (`idle`); one whose callbacks were not read (an open circuit) starts from the head. Forgotten
 * by the first pass after each sweep (once a second), which reads from the head: a callback due
 * below a floor (released, its lease lapsed, a late commit, a bulk load, moved to another URL)
 * waits for it at most.
 */
export class AdmissionFloors {
  private floors = new Map<string, Floor>();
  private idle: string | null = null;

  /**
   * The candidates' read's floors: the known ones (but those of `skipped`, destinations the read
   * leaves out) as three arrays, and the idle one.
   */
  params(skipped: ReadonlySet<string>): CandidateFloors {
    const floors = [...this.floors].filter(([key]) => !skipped.has(key));
    return {
      keys: floors.map(([o]) => o),
      at: floors.map(([, f]) => f.at),
      seq: floors.map(([, f]) => f.seq),
      idle: this.idle,
    };
  }

  /**
   * The floors a pass's candidate rows give (each destination not among them starts idle, or from
   * the head); those it left `unread` keep theirs, or start from the head if they had none.
   */
  note(rows: FloorRow[], unread: ReadonlySet<string>): void {
    const kept = [...unread].map((key): [string, Floor] => [key, this.floors.get(key) ?? HEAD]);
    this.floors = new Map([
      ...kept,
      ...rows
        .filter((r) => r.floor_at !== null)
        .map((r): [string, Floor] => [r.key, { at: r.floor_at!, seq: r.floor_seq! }]),
    ]);
    if (rows.length > 0) this.idle = rows[0].idle_floor;
  }

  /** A planned destination's floor (it was read this pass, so it has one). */
  of(key: string): Floor | undefined {
    return this.floors.get(key);
  }

  forget(): void {
    this.floors.clear();
    this.idle = null;
  }
}
