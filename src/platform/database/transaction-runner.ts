import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';

/** What is told after a commit that made callbacks due (admission's wake-up: delivery/admission-signal.ts). */
export const AFTER_COMMIT = Symbol('AFTER_COMMIT');
export interface AfterCommit {
  wake(): void;
}

/** The write under way in a transaction begun by TransactionRunner, and how many callbacks it made due. */
const open = new WeakMap<EntityManager, { due: number }>();

/**
 * Notes, inside a transaction begun by {@link TransactionRunner.transaction}, that it recorded or moved
 * callbacks that may be due now (the callback store calls it with its own writes). Outside one it
 * throws: every write of callbacks goes through that one path.
 */
export function noteDue(m: EntityManager, callbacks: number): void {
  const write = open.get(m);
  if (!write || !m.queryRunner?.isTransactionActive)
    throw new Error('callbacks are written inside TransactionRunner.transaction, with the change that calls for them');
  write.due += callbacks;
}

/**
 * Whether `m` is a transaction begun by {@link TransactionRunner.transaction} (an audit entry, for
 * one, is written in nothing else).
 */
export function inWrite(m: EntityManager): boolean {
  return open.has(m) && m.queryRunner?.isTransactionActive === true;
}

/**
 * The one path of every change that records callbacks or audit entries: one transaction, and
 * after its commit (never after a rollback) admission is woken if the change made callbacks due
 * (noteDue). No writer wakes admission itself. A write that commits as one statement of its own
 * (a company's own change: funding/domain/company-changes.ts) goes through {@link statement}.
 */
@Injectable()
export class TransactionRunner {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(AFTER_COMMIT) private readonly afterCommit: AfterCommit,
  ) {}

  async transaction<T>(work: (m: EntityManager) => Promise<T>): Promise<T> {
    const write = { due: 0 };
    const result = await this.db.transaction(async (m) => {
      open.set(m, write);
      try {
        return await work(m);
      } finally {
        open.delete(m);
      }
    });
    if (write.due > 0) this.afterCommit.wake();
    return result;
  }

  /** A write that is one statement committing alone; `due` says how many callbacks it made due. */
  async statement<T>(work: () => Promise<T>, due: (result: T) => number): Promise<T> {
    const result = await work();
    if (due(result) > 0) this.afterCommit.wake();
    return result;
  }
}
