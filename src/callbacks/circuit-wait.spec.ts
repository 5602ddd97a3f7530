import { Circuit, nextAttemptShown, nextProbeShown, probeReady } from './circuit-wait.js';

const NOW = 10_000;
const closed: Circuit = { openedAt: null, nextProbeAt: null, probeAsked: false };
const open = (nextProbeAt: number, probeAsked = false): Circuit => ({ openedAt: 1_000, nextProbeAt, probeAsked });

describe('what waits behind an open circuit, and until when', () => {
  it.each<[string, Circuit, boolean, number | null]>([
    ['closed: no probe', closed, false, null],
    ['open, its probe to come', open(NOW + 500), false, NOW + 500],
    ['open, its probe due: half-open, shown now', open(NOW - 500), true, NOW],
    ['open, its probe due this very moment', open(NOW), true, NOW],
    ['open, its probe asked for by a redelivery: now, whatever its time', open(NOW + 60_000, true), true, NOW],
  ])('%s', (_name, c, ready, shown) => {
    expect(probeReady(c, NOW)).toBe(ready);
    expect(nextProbeShown(c, NOW)).toBe(shown);
  });

  it.each<[string, string, number | null, Circuit | null, number | null]>([
    ['delivered: none', 'delivered', null, open(NOW + 500), null],
    ['failed: none', 'failed', null, null, null],
    ['pending, its destination closed: its own time, due or not', 'pending', NOW - 300, closed, NOW - 300],
    ['pending, its destination unknown to the read: its own time', 'pending', NOW + 300, null, NOW + 300],
    ['being attempted: its own time', 'sending', NOW - 300, open(NOW + 500), NOW - 300],
    [
      'pending behind an open circuit: the next probe, never a time past',
      'pending',
      NOW - 300,
      open(NOW + 500),
      NOW + 500,
    ],
    [
      'pending in a backoff beyond the probe: the probe (which releases it)',
      'pending',
      NOW + 9_000,
      open(NOW + 500),
      NOW + 500,
    ],
    ['pending behind a half-open circuit: now (it or the next is the probe)', 'pending', NOW - 300, open(NOW - 1), NOW],
    ['pending, its probe asked for: now', 'pending', NOW, open(NOW + 60_000, true), NOW],
  ])('the next attempt a callback shows, %s', (_name, status, nextAttemptAt, circuit, shown) => {
    expect(nextAttemptShown({ status, nextAttemptAt }, circuit, NOW)).toBe(shown);
  });
});
