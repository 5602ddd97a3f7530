import { EntityMetadata, ObjectLiteral } from 'typeorm';
import { Batcher, isDataError, SerialBatcher } from '../../platform/index.js';
import type { OneRowRepository, RowWrite, Versioned, Written } from './one-row.repository.js';

/** Rows read or written in one statement at most. */
const MAX_BATCH = 200;

/** What became of a change in a batch: written, overtaken by another change of its row, or to be written alone. */
type Outcome = 'written' | 'overtaken' | 'alone';

/**
 * One table's rows for a change of one row (CompanyChanges), read and written in batches: the reads
 * asked for in one tick go in one statement, and the writes that gather while one is under way go
 * together in the next, each a statement of OneRowRepository.
 * Each round trip costs PostgreSQL and this process tens of microseconds of system CPU whatever it
 * carries (docs/architecture.md, "API path"), and a batch commits once.
 *
 * A write statement writes each row only over the version read and inserts the callbacks of the
 * rows it wrote: each change is still all or nothing, its row and its callbacks in one statement.
 * A change whose row another transaction has locked, and every change of a statement PostgreSQL
 * refuses for a value or a constraint, is written alone, so only the change at fault fails.
 */
export class OneRowBatches<T extends ObjectLiteral & { id: string }> {
  private readonly reads = new Batcher<string, Versioned<T> | undefined>(
    (ids) => this.rows.read<T>(this.meta, ids),
    MAX_BATCH,
  );
  private readonly writes = new SerialBatcher<RowWrite<T>, Outcome>((ws) => this.writeMany(ws), MAX_BATCH);

  constructor(
    private readonly rows: OneRowRepository,
    private readonly meta: EntityMetadata,
  ) {}

  read(id: string): Promise<Versioned<T> | undefined> {
    return this.reads.call(id);
  }

  /** Whether the row was written (with its callbacks); false when another change of it came first. */
  async write(w: RowWrite<T>): Promise<boolean> {
    const outcome = await this.writes.call(w);
    if (outcome === 'alone') return (await this.rows.write(this.meta, [w], 'alone')).written.has(w.row.id);
    return outcome === 'written';
  }

  /**
   * One change per row in a statement: a second change of the same row read the same version, so
   * it is overtaken (read and decided again) rather than written over the first.
   */
  private async writeMany(ws: RowWrite<T>[]): Promise<Outcome[]> {
    const firsts = new Map<string, RowWrite<T>>();
    for (const w of ws) if (!firsts.has(w.row.id)) firsts.set(w.row.id, w);
    const first = (w: RowWrite<T>) => firsts.get(w.row.id) === w;
    let done: Written;
    try {
      done = await this.rows.write(this.meta, [...firsts.values()], 'together');
    } catch (e) {
      if (!isDataError(e)) throw e;
      return ws.map((w) => (first(w) ? 'alone' : 'overtaken'));
    }
    return ws.map((w) =>
      !first(w)
        ? 'overtaken'
        : done.written.has(w.row.id)
          ? 'written'
          : done.locked.has(w.row.id)
            ? 'overtaken'
            : 'alone',
    );
  }
}
