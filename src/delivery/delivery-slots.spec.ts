import { DeliverySlots } from './delivery-slots';

/** A piece of work that ends when told to. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

const tick = () => new Promise((r) => setImmediate(r));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Whether `p` has settled by now. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let yes = false;
  void p.then(
    () => (yes = true),
    () => (yes = true),
  );
  await tick();
  return yes;
}

describe('DeliverySlots', () => {
  it('runs at most its size at once and the rest in arrival order as slots free up', async () => {
    const slots = new DeliverySlots(2);
    const gates = [gate(), gate(), gate(), gate()];
    const started: number[] = [];
    const runs = gates.map((g, i) =>
      slots.run(async () => {
        started.push(i);
        await g.opened;
        return i;
      }),
    );
    await tick();
    expect(started).toEqual([0, 1]);
    expect(slots.inUse).toBe(2);
    gates[1].open();
    await runs[1].done;
    await tick();
    expect(started).toEqual([0, 1, 2]);
    expect(slots.inUse).toBe(2);
    gates[0].open();
    gates[2].open();
    gates[3].open();
    expect(await Promise.all(runs.map((r) => r.done))).toEqual([0, 1, 2, 3]);
    expect(started).toEqual([0, 1, 2, 3]);
    expect(slots.inUse).toBe(0);
  });

  it('frees the slot of work that throws', async () => {
    const slots = new DeliverySlots(1);
    const run = slots.run(() => Promise.reject(new Error('refused')));
    await expect(run.done).rejects.toThrow('refused');
    await run.released;
    expect(slots.inUse).toBe(0);
    expect(await slots.run(() => Promise.resolve('next')).done).toBe('next');
  });

  it('moves a delivery unanswered past its patience to a waiting place: its slot goes to the next', async () => {
    const slots = new DeliverySlots(1, 4, 20);
    const hanging = gate();
    const first = slots.run(() => hanging.opened);
    const second = slots.run(() => Promise.resolve('answered'));
    await tick();
    expect(await settled(first.released)).toBe(false);
    expect(await settled(second.done)).toBe(false);
    expect(await second.done).toBe('answered'); // once the first left its slot
    expect(await settled(first.released)).toBe(true);
    expect([slots.inUse, slots.waiting]).toEqual([0, 1]);
    hanging.open();
    await first.done;
    expect([slots.inUse, slots.waiting]).toEqual([0, 0]);
  });

  it('keeps an overdue delivery in its slot while every place is taken, and moves the first as one frees', async () => {
    const slots = new DeliverySlots(2, 1, 20);
    const [a, b, c] = [gate(), gate(), gate()];
    const waitingA = slots.run(() => a.opened);
    await sleep(40);
    const overdueB = slots.run(() => b.opened);
    const overdueC = slots.run(() => c.opened);
    await sleep(60);
    expect([slots.inUse, slots.waiting]).toEqual([2, 1]);
    expect(await settled(overdueB.released)).toBe(false);
    const next = slots.run(() => Promise.resolve('next'));
    expect(await settled(next.done)).toBe(false);
    a.open();
    await waitingA.done;
    await overdueB.released; // the first overdue moved to the place A left, and gave its slot to `next`
    expect(await next.done).toBe('next');
    expect(await settled(overdueC.released)).toBe(false);
    expect([slots.inUse, slots.waiting]).toEqual([1, 1]);
    b.open();
    c.open();
    await Promise.all([overdueB.done, overdueC.done]);
    expect([slots.inUse, slots.waiting]).toEqual([0, 0]);
  });
});
