// Dead origins (accept, never answer, until they recover) in child processes of their own
// (dead-origin-host.ts), ORIGINS_PER_PROCESS each: 10,000 origins need more descriptors than one
// process has here (20,000). Each origin is its own loopback address 127.1.x.y on one port (Linux
// routes all of 127/8 to lo), so neither descriptors nor ephemeral ports run out, and each is a
// destination of its own (its origin differs), which the service's guard allows as it allows
// 127.0.0.1 (CALLBACK_ALLOW_PRIVATE_TARGETS).
import { ChildProcess, fork } from 'node:child_process';
import path from 'node:path';
import { freePort } from './common.js';

export const ORIGINS_PER_PROCESS = 2_500;
const HOST_START_MS = 60_000;

/** Origin number `i`'s address: 127.1.0.1 … 127.1.0.254, 127.1.1.1 …: 65,024 of them. */
export function originAddress(i: number): string {
  if (i >= 254 * 256) throw new Error(`bench: no loopback address for origin ${i}`);
  return `127.1.${Math.floor(i / 254)}.${(i % 254) + 1}`;
}

export type HostCommand = { type: 'recover' } | { type: 'stats' } | { type: 'close' };
/** What a host process reports: connections offered per origin, distinct callbacks answered, the last one's time (epoch ms), requests held at recovery, its memory. */
export interface DeadOriginStats {
  type: 'stats';
  connections: number[];
  answered: number;
  lastAt: number;
  held: number;
  rss: number;
  heapUsed: number;
  /** An answer to a command (HostCommand), not the half-second report. */
  reply: boolean;
}
type HostMessage = DeadOriginStats | { type: 'ready' } | { type: 'failed'; error: string };

/** One host process, its last report and its memory's peaks. */
class Host {
  last: DeadOriginStats | null = null;
  rssPeak = 0;
  heapPeak = 0;
  private waiting: (() => void)[] = [];

  constructor(readonly child: ChildProcess) {
    child.on('message', (m: HostMessage) => {
      if (m.type !== 'stats') return;
      this.last = m;
      this.rssPeak = Math.max(this.rssPeak, m.rss);
      this.heapPeak = Math.max(this.heapPeak, m.heapUsed);
      if (m.reply) this.waiting.splice(0).forEach((r) => r());
    });
  }

  /** Sends a command and waits for the report that answers it. */
  ask(type: 'recover' | 'stats'): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.child.send({ type });
    });
  }
}

function startHost(first: number, count: number, port: number): Promise<Host> {
  const child = fork(path.resolve(__dirname, 'dead-origin-host.js'), [String(first), String(count), String(port)], {
    stdio: 'inherit',
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`bench: origin host ${first}… not ready within ${HOST_START_MS / 1000} s`)),
      HOST_START_MS,
    );
    child.on('message', (m: HostMessage) => {
      if (m.type === 'stats') return;
      clearTimeout(timer);
      if (m.type === 'ready') resolve(new Host(child));
      else reject(new Error(`bench: origin host ${first}…: ${m.error}`));
    });
    child.once(
      'exit',
      (code) => (clearTimeout(timer), reject(new Error(`bench: origin host ${first}… exited with ${code}`))),
    );
  });
}

/** `count` dead origins over ⌈count / ORIGINS_PER_PROCESS⌉ processes; figures from their last reports (`refresh()` asks for fresh ones). */
export async function deadOrigins(count: number) {
  const port = await freePort();
  const hosts: Host[] = [];
  const all = <T>(f: (h: Host) => Promise<T>) => Promise.all(hosts.map(f));
  try {
    for (let first = 0; first < count; first += ORIGINS_PER_PROCESS)
      hosts.push(await startHost(first, Math.min(ORIGINS_PER_PROCESS, count - first), port));
  } catch (e) {
    hosts.forEach((h) => h.child.kill());
    throw e;
  }
  const sum = (f: (s: DeadOriginStats) => number) => hosts.reduce((n, h) => n + (h.last ? f(h.last) : 0), 0);
  return {
    urls: Array.from({ length: count }, (_, i) => `http://${originAddress(i)}:${port}`),
    refresh: () => all((h) => h.ask('stats')),
    /** Callbacks answered 2xx (distinct webhook-ids), as last reported. */
    arrived: () => sum((s) => s.answered),
    /** When the last of them was first answered (epoch ms). */
    lastArrivedAt: () => Math.max(...hosts.map((h) => h.last?.lastAt ?? NaN)),
    held: () => sum((s) => s.held),
    connections: () => hosts.flatMap((h) => h.last?.connections ?? []),
    recover: () => all((h) => h.ask('recover')),
    /** Each host process's peak RSS and heap used (MB), as reported. */
    memory: () => hosts.map((h) => ({ pid: h.child.pid!, rssMb: h.rssPeak / 2 ** 20, heapMb: h.heapPeak / 2 ** 20 })),
    close: () =>
      all((h) =>
        h.child.exitCode !== null
          ? Promise.resolve()
          : new Promise((r) => (h.child.once('exit', r), h.child.send({ type: 'close' }))),
      ),
  };
}
export type DeadOrigins = Awaited<ReturnType<typeof deadOrigins>>;
