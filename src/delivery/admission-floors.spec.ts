import { AdmissionFloors, FloorRow } from './admission-floors.js';

const IDLE = '1000000';
/** A candidate row of `key`: its floor, or null when the pass did not read its callbacks. */
const row = (key: string, at: string | null): FloorRow => ({
  key,
  floor_at: at,
  floor_seq: at === null ? null : '7',
  idle_floor: IDLE,
});
/** Each destination's floor in the next read's parameters, by key. */
const floorsOf = (f: AdmissionFloors, skipped: string[] = []): Record<string, string> => {
  const p = f.params(new Set(skipped));
  return Object.fromEntries(p.keys.map((k, i) => [k, p.at[i]]));
};

describe('AdmissionFloors: where a pass starts each destination', () => {
  it(
    'starts a destination its last pass read from the floor that pass found, ' + 'and one it found nothing for idle',
    () => {
      const f = new AdmissionFloors();
      f.note([row('a', '500'), row('b', null)], new Set());
      expect(floorsOf(f)).toEqual({ a: '500' });
      expect(f.params(new Set()).idle).toBe(IDLE);
    },
  );

  it('keeps the floor of a destination left unread, and leaves it out of the read that skips it', () => {
    const f = new AdmissionFloors();
    f.note([row('a', '500'), row('b', '600')], new Set());
    f.note([row('b', '650')], new Set(['a']));
    expect(floorsOf(f)).toEqual({ a: '500', b: '650' });
    expect(floorsOf(f, ['a'])).toEqual({ b: '650' });
  });

  it('starts a destination left unread since the floors were forgotten from its head, not idle', () => {
    const f = new AdmissionFloors();
    f.note([row('a', '500'), row('b', '600')], new Set());
    f.forget();
    // The pass after the sweep reads b from its head and leaves a, catching up, unread.
    f.note([row('b', '600')], new Set(['a']));
    // Idle, a's backlog (all of it older than the idle floor) would look empty to the next pass that reads it.
    expect(floorsOf(f)).toEqual({ a: '0', b: '600' });
  });
});
