import { Client } from 'pg';
import type { CallbackQueue } from '../../src/delivery/callback-queue.js';
import { relayClient } from '../../src/delivery/relay-connection.js';
import { scratchDatabase, ScratchDatabase } from './scratch-database.js';

/** A scratch database and a relay connection to it (the statements admission runs, as the relay runs them). */
export async function openRelayScratch(): Promise<{ s: ScratchDatabase; relay: Client }> {
  const s = await scratchDatabase();
  const relay = relayClient(s.databaseUrl);
  await relay.connect();
  return { s, relay };
}

export async function closeRelayScratch(s: ScratchDatabase | undefined, relay: Client | undefined): Promise<void> {
  await relay?.end();
  await s?.close();
}

/** One live worker with `slots` delivery slots, then fresh statistics: the rows a test seeded are what plans see. */
export async function liveWorkerAndStatistics(s: ScratchDatabase, slots: number): Promise<void> {
  await s.pool.query(
    `INSERT INTO delivery_workers (id, concurrency, expires_at) VALUES ('w', $1, now() + interval '1 hour')`,
    [slots],
  );
  await s.pool.query('ANALYZE');
}

/** A queue that keeps the ids admission hands it and delivers nothing: a pass's reads are what is counted. */
export const recordingQueue = (admitted: string[]): CallbackQueue =>
  ({
    add: (ids: string[]) => {
      admitted.push(...ids);
      return Promise.resolve();
    },
  }) as unknown as CallbackQueue;
