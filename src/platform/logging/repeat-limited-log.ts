/**
 * Logs warnings, each distinct message at most once per interval, with how often it was held
 * back. Redis being down makes every worker and every relay pass fail with the same error many
 * times a second; operators need it once in a while, not as a flood.
 */
export class RepeatLimitedLog {
  private readonly seen = new Map<string, { at: number; held: number }>();

  constructor(
    private readonly write: (message: string) => void,
    private readonly intervalMs = 30_000,
    private readonly now: () => number = Date.now,
  ) {}

  warn(message: string): void {
    const now = this.now();
    const last = this.seen.get(message);
    if (last && now - last.at < this.intervalMs) {
      last.held++;
      return;
    }
    if (this.seen.size >= 100) this.forgetOlderThan(now - this.intervalMs);
    if (this.seen.size >= 100) this.seen.clear();
    this.seen.set(message, { at: now, held: 0 });
    this.write(last?.held ? `${message} (${last.held} more times since it was last logged)` : message);
  }

  private forgetOlderThan(t: number): void {
    for (const [message, { at }] of this.seen) if (at < t) this.seen.delete(message);
  }
}
