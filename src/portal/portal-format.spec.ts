import { chartOf, FieldError, parseChoice, parseTime, parseUuid, single, timeField, timeLabel } from './portal-format.js';

const hour = (h: number) => new Date(Date.UTC(2026, 10, 29, h));

describe('the portal chart', () => {
  it('stacks failed on succeeded, scaled to the busiest hour, inside the drawing', () => {
    const chart = chartOf([
      { hour: hour(0), succeeded: 0, failed: 0 },
      { hour: hour(1), succeeded: 6, failed: 2 },
      { hour: hour(2), succeeded: 2, failed: 2 },
    ]);
    expect(chart.max).toBe(8);
    expect([chart.succeeded, chart.failed]).toEqual([8, 4]);
    const [empty, busiest, half] = chart.bars;
    expect([empty.okH, empty.badH]).toEqual([0, 0]);
    expect(busiest.okH + busiest.badH).toBe(chart.base - 14);
    expect(busiest.badY + busiest.badH).toBe(busiest.okY);
    expect(half.okH + half.badH).toBe((chart.base - 14) / 2);
    for (const b of chart.bars) expect(b.x + b.w).toBeLessThanOrEqual(chart.width);
    expect([chart.firstLabel, chart.lastLabel]).toEqual(['00:00', '02:00']);
  });

  it('draws nothing tall without attempts (no division by zero)', () => {
    const chart = chartOf([{ hour: hour(5), succeeded: 0, failed: 0 }]);
    expect(chart.bars[0]).toMatchObject({ okH: 0, badH: 0 });
  });
});

describe('the portal query values', () => {
  it('reads datetime-local as UTC and zoned times as given; refuses anything else by field', () => {
    expect(parseTime('from', '2026-11-29T14:05')?.toISOString()).toBe('2026-11-29T14:05:00.000Z');
    expect(parseTime('from', '2026-11-29T14:05:09+01:00')?.toISOString()).toBe('2026-11-29T13:05:09.000Z');
    expect(parseTime('from', '')).toBeUndefined();
    for (const bad of ['yesterday', '2026-13-40T99:99', '2026-11-29', '1e12']) expect(() => parseTime('to', bad)).toThrow(/^to must be/);
    expect(timeField(new Date('2026-11-29T14:05:00Z'))).toBe('2026-11-29T14:05');
    expect(timeField(new Date('2026-11-29T14:05:09Z'))).toBe('2026-11-29T14:05:09');
    expect(timeLabel(null)).toBe('—');
    expect(timeLabel('2026-11-29T14:05:09.120Z')).toBe('2026-11-29 14:05:09 UTC');
  });

  it('takes ids, choices and single values strictly', () => {
    expect(parseUuid('companyId', ' 3F1C2A9E-0B7D-4C41-9A55-2F0E8C6D7B10 ')).toBe('3f1c2a9e-0b7d-4c41-9a55-2f0e8c6d7b10');
    expect(() => parseUuid('companyId', "x' OR 1=1")).toThrow(FieldError);
    expect(parseChoice('status', 'failed', ['pending', 'failed'])).toBe('failed');
    expect(() => parseChoice('status', 'sending', ['pending', 'failed'])).toThrow(/status must be one of pending, failed/);
    expect(() => single({ a: ['1', '2'] }, 'a')).toThrow(/more than once/);
    expect(single({ a: '1' }, 'a')).toBe('1');
  });
});
