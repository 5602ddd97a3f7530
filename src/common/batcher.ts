/**
 * Coalesces calls made in the same tick into one batch call: with dozens of deliveries (or API changes) in
 * flight, one query for N rows replaces N round-trips. Each caller gets its own result. A
 * `serial` batcher runs one batch at a time: calls made while one runs go together in the next,
 * as soon as it ends (for work whose batches must not pile up, however many ticks ask).
 */
export class Batcher<In, Out> {
  private pending: { input: In; resolve: (o: Out) => void; reject: (e: unknown) => void }[] = [];
  private scheduled = false;
  private running = false;

  constructor(
    private readonly run: (inputs: In[]) => Promise<Out[]>,
    private readonly maxBatch = 500,
    private readonly options: { serial?: boolean } = {},
  ) {}

  call(input: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      if (this.pending.length >= this.maxBatch) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    // Serial: the batch under way flushes what gathered meanwhile when it ends.
    if (this.options.serial && this.running) return;
    const batch = this.pending.splice(0, this.options.serial ? this.maxBatch : this.pending.length);
    if (batch.length === 0) return;
    this.running = true;
    this.run(batch.map((b) => b.input))
      .then(
        (outs) => batch.forEach((b, i) => b.resolve(outs[i])),
        (e) => batch.forEach((b) => b.reject(e)),
      )
      .finally(() => {
        this.running = false;
        if (this.options.serial && this.pending.length > 0) this.flush();
      });
  }
}
