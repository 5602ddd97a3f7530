import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { CallbackEvent, traced } from './callback-event.js';
import { CallbackInserts } from './store/recording.js';

export { traced };
export type { CallbackEvent };

/**
 * The domain's only door into callbacks: a change records its callbacks inside its own
 * transaction (platform/database/transaction-runner.ts), so a change and its callbacks commit together or not at all,
 * and admission is woken once it committed.
 */
@Injectable()
export class CallbackRecorder {
  constructor(private readonly inserts: CallbackInserts) {}

  /** Records the callbacks of one change; returns how many were written (events without a URL are skipped). */
  async record(m: EntityManager, events: CallbackEvent[]): Promise<number> {
    const due = events.filter((e) => e.url !== null);
    if (due.length === 0) return 0;
    await this.inserts.insertCallbacks(m, traced(due));
    return due.length;
  }
}
