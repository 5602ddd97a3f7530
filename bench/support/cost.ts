// What a scenario's callbacks cost the service, beside its rate: the service's CPU per callback
// (every thread of every process it runs, those it starts itself included) against the baseline
// got client's CPU per request, and each service process's resident set and live heap. /proc
// (Linux; USER_HZ is 100 there): a process's stat counts the CPU of all its threads.
import { readdirSync, readFileSync } from 'node:fs';
import got from 'got';
import { figure, fmt } from './common.js';
import type { Row } from './results.js';
import type { ServiceRun } from './service.js';
import { peakRssMb, rssMb } from './system.js';

const CLK_TCK = 100;
const METRICS_TIMEOUT_MS = 5_000;
/** The bound on every service process's resident set, in every scenario. */
export const RSS_LIMIT_MB = 256;

/** A process's stat fields after its name (field 3 of proc(5) is the first), or null once it ended. */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** `roots` and every process descended from them that runs now. */
export function withDescendants(roots: number[]): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const ppid = Number(statFields(Number(entry))?.[1] ?? NaN);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
  }
  const all = [...roots];
  for (let i = 0; i < all.length; i++) all.push(...(children.get(all[i]) ?? []));
  return all;
}

/** CPU µs (user + system) the run's processes and their descendants have used so far; a window's is the difference. */
export function serviceCpuUs(run: ServiceRun): number {
  let us = 0;
  for (const pid of withDescendants(run.pids())) {
    const f = statFields(pid);
    if (f) us += ((Number(f[11]) + Number(f[12])) * 1e6) / CLK_TCK;
  }
  return us;
}

export interface ProcessMemory {
  /** The process's ROLE, or `child of <role>` for one a service process started. */
  role: string;
  rssMb: number;
  /** VmHWM: the most the process has held resident since it started. */
  peakRssMb: number;
  /** The JavaScript heap in use (its /metrics nodejs_heap_size_used_bytes); NaN where the process serves none. */
  heapMb: number;
}

/** The JavaScript heap in use (MB) that a service's /metrics text shows, or NaN if it shows none. */
export function heapUsedMb(metrics: string): number {
  return Number(/^nodejs_heap_size_used_bytes(?:\{[^}]*\})? (\S+)/m.exec(metrics)?.[1] ?? NaN) / 2 ** 20;
}

async function heapMb(port: number): Promise<number> {
  try {
    const text = await got(`http://127.0.0.1:${port}/metrics`, {
      timeout: { request: METRICS_TIMEOUT_MS },
      retry: { limit: 0 },
    }).text();
    return heapUsedMb(text);
  } catch {
    return NaN;
  }
}

/** Each service process's memory now, and that of the processes they started. */
export async function processMemory(run: ServiceRun): Promise<ProcessMemory[]> {
  const memory: ProcessMemory[] = [];
  for (const p of run.processes()) {
    memory.push({ role: p.role, rssMb: rssMb(p.pid), peakRssMb: peakRssMb(p.pid), heapMb: await heapMb(p.port) });
    for (const pid of withDescendants([p.pid]).slice(1))
      memory.push({ role: `child of ${p.role}`, rssMb: rssMb(pid), peakRssMb: peakRssMb(pid), heapMb: NaN });
  }
  return memory;
}

/** A figure's name for a role: `all`, `api`, `worker`, `childOfAll`… */
const key = (role: string) => role.replace(/ (\w)/g, (_, c: string) => c.toUpperCase());

/** The row and figures of each process's memory, held to RSS_LIMIT_MB at its peak. */
export function memoryReport(memory: ProcessMemory[]) {
  const row: Row = {
    measure: 'service memory per process: RSS (peak since start) / live heap',
    result: memory.map((m) => `${m.role} ${fmt(m.rssMb)} (${fmt(m.peakRssMb)}) / ${fmt(m.heapMb)} MB`).join('; '),
    goal: `peak ≤ ${RSS_LIMIT_MB} MB each`,
    met: memory.length > 0 && memory.every((m) => m.peakRssMb <= RSS_LIMIT_MB),
  };
  const figures: Record<string, number | null> = {};
  const seen = new Map<string, number>();
  for (const m of memory) {
    const n = (seen.get(m.role) ?? 0) + 1;
    seen.set(m.role, n);
    const name = `${key(m.role)}${n > 1 ? n : ''}`;
    figures[`${name}RssMb`] = figure(m.rssMb);
    figures[`${name}PeakRssMb`] = figure(m.peakRssMb);
    figures[`${name}HeapMb`] = figure(m.heapMb);
  }
  return { row, figures };
}

/**
 * The rows and figures of a window's cost: the service's CPU per `unit` (µs used over the window
 * ÷ `count`) beside the baseline client's per request and their ratio, then the memory of each
 * process, held to RSS_LIMIT_MB at its peak.
 */
export function costReport(
  unit: string,
  serviceUs: number,
  count: number,
  baselineClientCpuUs: number,
  memory: ProcessMemory[],
) {
  const perUnit = serviceUs / count;
  const ratio = perUnit / baselineClientCpuUs;
  const held = memoryReport(memory);
  const rows: Row[] = [
    {
      measure: `CPU per ${unit}: service (all its processes and threads) / got's client per baseline request`,
      result: `${fmt(perUnit)} µs / ${fmt(baselineClientCpuUs)} µs = ${fmt(ratio, 2)}×`,
    },
    held.row,
  ];
  const figures: Record<string, number | null> = {
    [`serviceCpuUsPer${unit[0].toUpperCase()}${unit.slice(1)}`]: figure(perUnit),
    baselineClientCpuUs: figure(baselineClientCpuUs),
    cpuRatio: figure(ratio),
    ...held.figures,
  };
  return { rows, figures };
}

/** Opens a cost window on the run's processes now; `close(count)` reports it for `count` units. */
export function costWindow(run: ServiceRun, unit: string, baselineClientCpuUs: number) {
  const before = serviceCpuUs(run);
  return {
    close: async (count: number) =>
      costReport(unit, serviceCpuUs(run) - before, count, baselineClientCpuUs, await processMemory(run)),
  };
}
