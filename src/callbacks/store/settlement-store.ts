import type { Pool } from 'pg';
import { Injectable } from '@nestjs/common';
import { SqlPool } from '../../platform/index.js';
import { DestinationRow, DestinationSave, READ_DESTINATIONS, saveParams } from './destination-states.js';
import { AttemptRecord, recordFor, recordParams, saveFor } from './settlement.js';

/**
 * Settlement's statements, on SqlPool's connections (prepared by name, planned by index whatever
 * the statistics: the plans tests check them there). Which variant of a write runs (with the
 * operational events of a circuit's opening or closing, of callbacks failed for good) follows from
 * what it writes: the caller passes the records and the destinations' states only.
 */
@Injectable()
export class SettlementStore {
  private readonly pool: Pool;

  constructor(sql: SqlPool) {
    this.pool = sql.pool;
  }

  /** The destinations of these keys as stored, each with PostgreSQL's clock (epoch ms). */
  async readDestinations(keys: string[]): Promise<(DestinationRow & { now: number })[]> {
    return (
      await this.pool.query<DestinationRow & { now: number }>({
        name: 'settlement-read',
        text: READ_DESTINATIONS,
        values: [keys],
      })
    ).rows;
  }

  /**
   * The attempts, their callbacks' fates and their destinations' new states, in one statement;
   * returns the keys of the destinations written (one written elsewhere since its version is left out).
   */
  async record(records: AttemptRecord[], saves: DestinationSave[]): Promise<string[]> {
    const statement = recordFor({
      circuit: reportsCircuit(saves),
      failures: records.some((r) => r.fate.status === 'failed'),
    });
    const { rows } = await this.pool.query<{ key: string }>({
      ...statement,
      values: [...recordParams(records), ...saveParams(saves)],
    });
    return rows.map((r) => r.key);
  }

  /** Destinations' new states alone (a refold); returns the keys written. */
  async save(saves: DestinationSave[]): Promise<string[]> {
    const { rows } = await this.pool.query<{ key: string }>({
      ...saveFor({ circuit: reportsCircuit(saves) }),
      values: saveParams(saves),
    });
    return rows.map((r) => r.key);
  }
}

/** Whether a write opens or closes a circuit (it then records the operational events). */
const reportsCircuit = (saves: DestinationSave[]): boolean => saves.some((s) => s.reported !== null);
