// Each process's memory in a run, as the outage reports it: the service's processes (RSS sampled
// each second from /proc; heap used from its /metrics when it shows one), the dead origins' host
// processes (their own reports) and this driver (the healthy partner's receiver, the slow origins).
import { Got } from 'got';
import { fmt, figure } from './common.js';
import type { ServiceRun } from './service.js';
import type { memorySampler } from './system.js';
import { heapUsedMb, RSS_LIMIT_MB } from './cost.js';

/** Heap used by the process answering the service's /metrics (MB), or NaN if it shows none. */
export async function serviceHeapMb(api: Got): Promise<number> {
  return heapUsedMb(await api.get('metrics').text());
}

interface HostMemory {
  pid: number;
  rssMb: number;
  heapMb: number;
}

export function memoryLines(
  run: ServiceRun,
  samples: ReturnType<typeof memorySampler>,
  hosts: HostMemory[],
  heapInOutage: number,
  heapAtEnd: number,
) {
  const service = run.pids().map((pid) => samples.rssPeak(pid));
  const own = process.memoryUsage();
  const hostRss = hosts.map((h) => h.rssMb);
  const peak = Math.max(...service, ...hostRss);
  return {
    details: [
      `service RSS peak per process: ${service.map((r) => `${fmt(r)} MB`).join(' / ')}; heap used (its /metrics) in the outage ${fmt(heapInOutage)} MB, at the end ${fmt(heapAtEnd)} MB`,
      `dead origins' ${hosts.length} host processes, RSS / heap used peak: ${hosts.map((h) => `${fmt(h.rssMb)} / ${fmt(h.heapMb)} MB`).join(', ')}`,
      `the driver (healthy partner's receiver, slow origins) at the end: RSS ${fmt(own.rss / 2 ** 20)} MB, heap used ${fmt(own.heapUsed / 2 ** 20)} MB`,
    ],
    row: {
      measure: 'RSS peak per process (service, origin hosts)',
      result: `${fmt(peak)} MB (service ${service.map((r) => fmt(r)).join(' / ')} MB)`,
      goal: `≤ ${RSS_LIMIT_MB} MB`,
      met: peak <= RSS_LIMIT_MB,
    },
    figures: {
      serviceRssPeakMb: figure(Math.max(...service)),
      serviceHeapInOutageMb: figure(heapInOutage),
      serviceHeapAtEndMb: figure(heapAtEnd),
      originHostRssPeakMb: figure(Math.max(...hostRss)),
      originHostHeapPeakMb: figure(Math.max(...hosts.map((h) => h.heapMb))),
    },
  };
}
