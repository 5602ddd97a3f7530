import { Gauge, Registry } from 'prom-client';

/**
 * The process's memory, read at scrape time under prom-client's default metrics' names: the
 * resident set and the JavaScript heap in use. What the process keeps per partner or destination
 * is bounded (docs/operations.md, Memory), so both stay flat however many there are.
 */
export function registerProcessMemoryGauges(registry: Registry): void {
  new Gauge({
    name: 'process_resident_memory_bytes',
    help: 'Resident memory size in bytes',
    registers: [registry],
    collect() {
      this.set(process.memoryUsage.rss());
    },
  });
  new Gauge({
    name: 'nodejs_heap_size_used_bytes',
    help: 'Process heap size used from Node.js in bytes',
    registers: [registry],
    collect() {
      this.set(process.memoryUsage().heapUsed);
    },
  });
}
