/**
 * Coalesces calls made in the same tick into one batch call: with dozens of deliveries in
 * flight, one query for N rows replaces N round-trips. Each caller gets its own result.
 */
export class Batcher<In, Out> {
  private pending: { input: In; resolve: (o: Out) => void; reject: (e: unknown) => void }[] = [];
  private scheduled = false;

  constructor(
    private readonly run: (inputs: In[]) => Promise<Out[]>,
    private readonly maxBatch = 500,
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
    const batch = this.pending.splice(0, this.pending.length);
    if (batch.length === 0) return;
    this.run(batch.map((b) => b.input)).then(
      (outs) => batch.forEach((b, i) => b.resolve(outs[i])),
      (e) => batch.forEach((b) => b.reject(e)),
    );
  }
}
