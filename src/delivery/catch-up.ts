import { Candidate, isFresh } from './admission-plan.js';

/** A destination catching up, as the last pass that read it found it. */
interface Behind {
  /** The pass (admission's count) that last read it. */
  read: number;
  /** Its oldest due callback then (epoch ms). */
  oldestDue: number;
}

/**
 * The destinations catching up (admission-plan.ts, isFresh: their oldest due callback was due
 * for longer than FRESH_MS when a pass last read them), and which of them a pass reads. A pass
 * reads every other destination, and of these only the `readAhead` it read least recently: it
 * cannot give more destinations a slot than there are slots, and reading a thousand recovering
 * backlogs' heads on every pass made each pass, and so every fresh callback's wait for one, tens
 * of milliseconds long. Each is read again within ⌈catching up / readAhead⌉ passes, and is
 * re-examined then: caught up (fresh or nothing due), it leaves; a destination that falls behind
 * joins when a pass reads it.
 */
export class CatchUp {
  private behind = new Map<string, Behind>();

  /** The destinations a pass leaves unread: all catching up but the `readAhead` read least recently. */
  unread(readAhead: number): Set<string> {
    if (this.behind.size <= readAhead) return new Set();
    const byRead = [...this.behind].sort(([, a], [, b]) => a.read - b.read);
    return new Set(byRead.slice(Math.max(0, readAhead)).map(([key]) => key));
  }

  /** The oldest due callback among `unread` as they were last read (epoch ms), or null. */
  oldestDue(unread: ReadonlySet<string>): number | null {
    let oldest: number | null = null;
    for (const key of unread) {
      const due = this.behind.get(key)?.oldestDue;
      if (due !== undefined && (oldest === null || due < oldest)) oldest = due;
    }
    return oldest;
  }

  /** Pass `pass` read every destination but `unread`, and found `candidates` (something due) at `now`. */
  note(pass: number, unread: ReadonlySet<string>, candidates: Candidate[], now: number): void {
    const next = new Map<string, Behind>();
    for (const key of unread) next.set(key, this.behind.get(key)!);
    for (const c of candidates) if (!isFresh(c.oldestDue, now)) next.set(c.key, { read: pass, oldestDue: c.oldestDue });
    this.behind = next;
  }
}
