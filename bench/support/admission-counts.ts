// What admission costs, as counts the machine's load does not change: the passes the leader
// completed (its /metrics) and the entries each index of `callbacks` returned (pg_stat_user_indexes
// of the run's database: dead entries included, those marked dead not). Every statement counts
// there, admission's and the workers' alike; admission alone reads the index of a destination's
// pending callbacks in due order (`callbacks_admission_idx`; `callbacks_pending_idx` before it).
// PostgreSQL reports a busy backend's counts about once a second: compare phases of many seconds.
import { Got } from 'got';
import { Client } from 'pg';

const ADMISSION_ORDER = ['callbacks_admission_idx', 'callbacks_pending_idx'];

export interface AdmissionCounts {
  passes: number;
  /** Entries returned so far, per index of `callbacks`. */
  read: Map<string, number>;
}

export async function admissionCounts(api: Got, pg: Client): Promise<AdmissionCounts> {
  const metrics = await api.get('metrics').text();
  const passes = Number(/^funding_admission_passes_total (\d+)/m.exec(metrics)?.[1] ?? NaN);
  const { rows } = await pg.query<{ name: string; n: string }>(
    `SELECT indexrelname AS name, idx_tup_read AS n FROM pg_stat_user_indexes WHERE relname = 'callbacks'`,
  );
  return { passes, read: new Map(rows.map((r) => [r.name, Number(r.n)])) };
}

/** Between two readings: passes, and the entries the admission-order index returned per pass. */
export function perPass(from: AdmissionCounts, to: AdmissionCounts): { passes: number; admissionOrder: number } {
  const passes = to.passes - from.passes;
  const read = ADMISSION_ORDER.reduce((n, i) => n + (to.read.get(i) ?? 0) - (from.read.get(i) ?? 0), 0);
  return { passes, admissionOrder: passes > 0 ? read / passes : NaN };
}

/** "N admission passes in S s; entries read per pass (per second): index n (n/s), …", the busiest indexes first. */
export function describePerPass(from: AdmissionCounts, to: AdmissionCounts, seconds: number): string {
  const passes = to.passes - from.passes;
  const f = (n: number) => (Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: 1 }) : 'n/a');
  const read = [...to.read].map(([i, n]) => [i, n - (from.read.get(i) ?? 0)] as const).filter(([, n]) => n > 0);
  const each = read
    .sort((a, b) => b[1] - a[1])
    .map(([i, n]) => `${i} ${f(passes > 0 ? n / passes : NaN)} (${f(n / seconds)}/s)`);
  return `${f(passes)} admission passes in ${f(seconds)} s; index entries read per pass (per second): ${each.join(', ') || 'none'}`;
}
