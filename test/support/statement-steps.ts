/**
 * The steps of a random history over the statement world (statement-world.ts): what can happen
 * (stepArb, drawn from the lifecycle table's events), how each step is applied, what a history checks as it goes, and the drain that ends it.
 */
import fc from 'fast-check';
import { CALLBACK_TRANSITIONS, type LifeEvent } from '../../src/callbacks/callback-lifecycle.js';
import { PROVEN_FOR_MS } from '../../src/delivery/destination-window.js';
import { Behaviour, BEHAVIOURS } from './delivery-model.js';
import { LEASE_MS, PROBE_LAST, SCHEDULE_TOTAL, World } from './statement-world.js';

export function check(ok: boolean, message: () => string): void {
  if (!ok) throw new Error(message());
}

const k = <K extends string>(...ks: K[]) => fc.constantFrom(...ks);
/** Each step a random history can take, with how often. */
export const STEPS = {
  commit: { weight: 4, arbitrary: fc.record({ k: k('commit'), d: fc.nat(2), c: fc.nat(2) }) },
  // A partner moves a company's URL to another destination, or removes it.
  url: { weight: 2, arbitrary: fc.record({ k: k('move', 'move', 'remove'), d: fc.nat(2), c: fc.nat(2) }) },
  // One partner's destination at an origin answers otherwise (the other partner's there keeps its own behaviour).
  behave: { weight: 2, arbitrary: fc.record({ k: k('behave'), d: fc.nat(5), b: fc.constantFrom(...BEHAVIOURS) }) },
  admission: { weight: 5, arbitrary: fc.record({ k: k('pass', 'pass', 'sweep') }) },
  // A pass whose jobs Redis refuses: what it admitted is released.
  refuse: { weight: 2, arbitrary: fc.record({ k: k('refuse') }) },
  settle: {
    weight: 4,
    arbitrary: fc.record({
      k: k('settle'),
      pick: fc.nat(),
      as: fc.option(fc.constantFrom<Behaviour>('ok', '5xx', '429', 'hang', '4xx'), { freq: 4 }),
      late: fc.nat(50),
    }),
  },
  crash: { weight: 1, arbitrary: fc.record({ k: k('crash', 'restart'), w: fc.nat(1) }) },
  tick: {
    weight: 3,
    arbitrary: fc.record({
      k: k('tick'),
      ms: fc.oneof(
        fc.integer({ min: 100, max: 3000 }),
        fc.constantFrom(LEASE_MS + 1, SCHEDULE_TOTAL + 1, PROBE_LAST, PROVEN_FOR_MS),
      ),
    }),
  },
  redeliver: { weight: 1, arbitrary: fc.record({ k: k('redeliver'), pick: fc.nat() }) },
  promote: { weight: 1, arbitrary: fc.record({ k: k('promote'), pick: fc.nat() }) },
  prune: { weight: 1, arbitrary: fc.record({ k: k('prune') }) },
};
export type StepName = keyof typeof STEPS;

/**
 * The steps that make each event of the lifecycle table (src/callbacks/callback-lifecycle.ts): the
 * random histories are drawn from the table's events, so an event the table gains has no step
 * until one is named here (test/delivery-statements.e2e-spec.ts checks that each has one).
 */
export const EVENT_STEPS: Record<LifeEvent, StepName[]> = {
  record: ['commit'],
  admit: ['admission', 'refuse'],
  release: ['refuse'],
  lapse: ['admission'],
  deliver: ['settle', 'tick'],
  retry: ['settle', 'tick'],
  // An attempt's last failure or final answer, an outage outlasting the schedule (the sweep), a removed URL.
  fail: ['settle', 'tick', 'admission', 'url', 'refuse'],
  // An operator's Promote, or a probe's answer closing the circuit.
  'due now': ['promote', 'settle', 'tick'],
  redeliver: ['redeliver'],
  'move URL': ['url'],
  'remove URL': ['url'],
  prune: ['prune'],
};
/** The steps of the world around the callbacks: answers change, workers crash and restart, time passes. */
export const WORLD_STEPS: StepName[] = ['behave', 'crash', 'tick'];

/** The steps of the table's events and of the world, but those left out (`except`). */
export function tableSteps(except: StepName[] = []): StepName[] {
  return [...new Set([...CALLBACK_TRANSITIONS.flatMap((t) => EVENT_STEPS[t.event] ?? []), ...WORLD_STEPS])].filter(
    (n) => !except.includes(n),
  );
}
export const stepsOf = (names: StepName[]) => fc.oneof(...names.map((n) => STEPS[n]));
export const stepArb = stepsOf(tableSteps());
export type Step = typeof stepArb extends fc.Arbitrary<infer T> ? T : never;

export async function apply(w: World, s: Step, checks: Checks): Promise<void> {
  const origin = (d: number) => w.origins[d % w.origins.length];
  if (s.k === 'commit') await w.commit(origin(s.d), s.c);
  if (s.k === 'move') await w.moveUrl(s.c, origin(s.d));
  if (s.k === 'remove') await w.moveUrl(s.c, null);
  if (s.k === 'behave') w.behaviour.set(w.keys[s.d % w.keys.length], s.b);
  if (s.k === 'sweep') await w.sweep();
  if (s.k === 'pass') await checks.admitted(w, await w.pass());
  if (s.k === 'settle' && w.entries.length > 0) await w.settle(w.entries[s.pick % w.entries.length], s.as, s.late);
  if (s.k === 'crash') await w.crash(s.w % w.workers.length);
  if (s.k === 'restart') await w.restart(s.w % w.workers.length);
  if (s.k === 'tick') await w.tick(s.ms);
  if (s.k === 'refuse') await w.refusedPass();
  if (s.k === 'prune') await w.prune();
  if (s.k === 'promote') {
    const pending = (await w.callbacks()).filter((c) => c.status === 'pending');
    if (pending.length > 0) await w.promote(pending[s.pick % pending.length].id);
  }
  if (s.k === 'redeliver') {
    const done = (await w.callbacks()).filter(
      (c) => (c.status === 'delivered' || c.status === 'failed') && c.url_removed_at === null,
    );
    const c = done[s.pick % done.length];
    // Taken whatever its destination's circuit (redelivery-rules.ts); an open one is asked for it as its next probe.
    if (c) {
      await w.redeliver(c.id);
      const d = (await w.destinations()).find((x) => x.key === c.destination);
      check(
        d?.opened_at == null || d.probe_id === c.id,
        () => `redelivered ${c.id} while ${c.destination} was open: its probe asked for ${d?.probe_id}`,
      );
    }
  }
}

/** What a history checks as it goes: after each admission pass (what it admitted), and after each step or round. */
export interface Checks {
  admitted(w: World, ids: string[]): Promise<void>;
  settled(w: World): Promise<void>;
}

/** Every destination answers, workers are back: admission, settlements and time until nothing waits. */
export async function drain(w: World, checks: Checks): Promise<void> {
  for (const key of w.keys) w.behaviour.set(key, 'ok');
  for (const i of w.workers.keys()) w.workers[i].up = true;
  await w.announce();
  for (let round = 0; round < 300; round++) {
    const rows = await w.callbacks();
    if (!rows.some((c) => c.status === 'pending' || c.status === 'sending')) return;
    await w.sweep();
    await checks.admitted(w, await w.pass());
    for (const e of [...w.entries]) await w.settle(e, 'ok');
    await checks.settled(w);
    if (w.entries.length === 0) await w.tick(await w.untilNext());
  }
  throw new Error(
    `still waiting after 300 rounds: ${JSON.stringify((await w.callbacks()).filter((c) => c.status === 'pending' || c.status === 'sending'))}`,
  );
}
