interface Pending<In, Out> {
  input: In;
  resolve: (o: Out) => void;
  reject: (e: unknown) => void;
}

/**
 * Coalesces calls made in the same tick (or, with `gatherMs`, within that many milliseconds of
 * the first) into one batch call: with dozens of deliveries (or API changes) in flight, one query
 * for N rows replaces N round-trips. Each caller gets its own result.
 */
export class Batcher<In, Out> {
  protected pending: Pending<In, Out>[] = [];
  private scheduled = false;

  constructor(
    private readonly run: (inputs: In[]) => Promise<Out[]>,
    private readonly maxBatch = 500,
    private readonly gatherMs = 0,
  ) {}

  call(input: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      if (this.pending.length >= this.maxBatch) void this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        const flush = () => {
          this.scheduled = false;
          void this.flush();
        };
        if (this.gatherMs > 0) setTimeout(flush, this.gatherMs);
        else setImmediate(flush);
      }
    });
  }

  /**
   * Runs what has gathered, up to maxBatch, as one batch; resolves (never rejects) once its callers
   * have their results or its error.
   */
  protected async flush(): Promise<void> {
    const batch = this.pending.splice(0, this.maxBatch);
    if (batch.length === 0) return;
    await Promise.resolve(batch.map((b) => b.input))
      .then(this.run)
      .then(
        (outs) => batch.forEach((b, i) => b.resolve(outs[i])),
        (e) => batch.forEach((b) => b.reject(e)),
      );
  }
}

/**
 * A batcher that runs one batch at a time: calls made while one runs go together in the next, as
 * soon as it ends (for work whose batches must not pile up, however many ticks ask).
 */
export class SerialBatcher<In, Out> extends Batcher<In, Out> {
  private running = false;

  protected override async flush(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await super.flush();
    } finally {
      this.running = false;
    }
    if (this.pending.length > 0) void this.flush();
  }
}
