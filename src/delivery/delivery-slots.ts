/**
 * This process's delivery slots (CALLBACK_CONCURRENCY), taken in arrival order. Admission never
 * hands out more callbacks than all workers' slots together, but a job carries several and one
 * process may take more jobs than its share: the callbacks beyond its slots wait here, not on
 * more sockets.
 */
export class DeliverySlots {
  private used = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly size: number) {}

  /** Runs `work` in a slot, once one is free. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.used < this.size) this.used++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve)); // the slot is handed over as it is freed
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.used--;
    }
  }

  /** Deliveries running now. */
  get inUse(): number {
    return this.used;
  }
}
