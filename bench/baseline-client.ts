// The baseline's got loop in a process of its own, so that its CPU is got's client's alone (the
// receiver runs in the bench's process): `node dist/bench/baseline-client.js <url prefix> <requests>`
// prints {"seconds", "cpuUs"} of the loop (process.cpuUsage: every thread of this process).
import { gotLoop } from './scenarios/baseline.js';

async function main(): Promise<void> {
  const [prefix, count] = process.argv.slice(2);
  const requests = Number(count);
  if (!prefix || !Number.isInteger(requests) || requests < 1)
    throw new Error('usage: baseline-client.js <url prefix> <requests>');
  process.stdout.write(`${JSON.stringify(await gotLoop((i) => `${prefix}${i}`, requests))}\n`);
}

main().catch((e: Error) => {
  console.error(e.message);
  process.exit(1);
});
