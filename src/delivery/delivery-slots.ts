/**
 * A delivery still unanswered this long after it started waits on its answer in a waiting place
 * and leaves its slot to the next: a slot is for sending and reading answers (CPU), a waiting place
 * only holds a socket and its request until the answer or the timeout (memory). Healthy receivers
 * answer well within it; a dead or slow one never takes a slot for longer.
 */
export const PATIENCE_MS = 150;

/**
 * Waiting places per delivery slot. What one costs was measured (docs/configuration.md,
 * `CALLBACK_CONCURRENCY`): about 18 KB of heap and 30–75 KB of RSS for a request waiting on a
 * receiver that accepts and never answers. Five a slot (1,000 at the default 200 slots) bound what
 * hanging requests add to a process (tens of MB, not hundreds) while 10,000 new destinations never
 * answer, and still open all their circuits (one timeout each) within minutes.
 */
export const WAITING_PER_SLOT = 5;

/** One delivery's run: `released` when it settles or moves to a waiting place, `done` when it settles. */
export interface SlotRun<T> {
  released: Promise<void>;
  done: Promise<T>;
}

/**
 * This process's delivery slots (CALLBACK_CONCURRENCY), taken in arrival order, and its waiting
 * places (WAITING_PER_SLOT for each slot). Admission never hands out more callbacks than all
 * workers' slots and places together, but a job carries several and one process may take more jobs
 * than its share: the callbacks beyond its slots wait here, not on more sockets. A delivery past
 * PATIENCE_MS moves to a waiting place as soon as one is free (the first overdue first).
 */
export class DeliverySlots {
  private used = 0;
  private waitingUsed = 0;
  private readonly queue: (() => void)[] = [];
  /** Deliveries in slots past their patience while every place was taken, oldest first; each moves when called. */
  private readonly overdue = new Set<() => void>();

  constructor(
    private readonly size: number,
    private readonly places = size * WAITING_PER_SLOT,
    private readonly patienceMs = PATIENCE_MS,
  ) {}

  /** Runs `work` in a slot, once one is free. */
  run<T>(work: () => Promise<T>): SlotRun<T> {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const done = this.take().then(() => this.inSlot(work, release));
    return { released, done };
  }

  /** Deliveries in slots now. */
  get inUse(): number {
    return this.used;
  }

  /** Deliveries waiting on an answer in waiting places now. */
  get waiting(): number {
    return this.waitingUsed;
  }

  private async inSlot<T>(work: () => Promise<T>, release: () => void): Promise<T> {
    let waiting = false;
    const move = () => {
      this.overdue.delete(move);
      waiting = true;
      this.waitingUsed++;
      this.free();
      release();
    };
    const timer = setTimeout(() => {
      if (this.waitingUsed < this.places) move();
      else this.overdue.add(move);
    }, this.patienceMs);
    try {
      return await work();
    } finally {
      clearTimeout(timer);
      if (waiting) {
        this.waitingUsed--;
        this.overdue.values().next().value?.(); // the first overdue takes the place
      } else {
        this.overdue.delete(move); // it settled in its slot
        this.free();
      }
      release();
    }
  }

  private take(): Promise<void> {
    if (this.used < this.size) {
      this.used++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => this.queue.push(resolve)); // the slot is handed over as it is freed
  }

  private free(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.used--;
  }
}
