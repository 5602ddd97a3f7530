import { DeliverySlots } from './delivery-slots';

/** A piece of work that ends when told to. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
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
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1]);
    expect(slots.inUse).toBe(2);
    gates[1].open();
    await runs[1];
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1, 2]);
    expect(slots.inUse).toBe(2);
    gates[0].open();
    gates[2].open();
    gates[3].open();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3]);
    expect(started).toEqual([0, 1, 2, 3]);
    expect(slots.inUse).toBe(0);
  });

  it('frees the slot of work that throws', async () => {
    const slots = new DeliverySlots(1);
    await expect(slots.run(() => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(slots.inUse).toBe(0);
    expect(await slots.run(() => Promise.resolve('next'))).toBe('next');
  });
});
