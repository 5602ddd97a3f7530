import {
  breakable,
  chartOf,
  FieldError,
  parseChoice,
  parseMessage,
  parseOrigin,
  parseTime,
  parseUuid,
  queryOf,
  single,
  textWithTimes,
  timeField,
  timeLabel,
} from './portal-format.js';

const hour = (h: number) => new Date(Date.UTC(2026, 10, 29, h));

describe('the portal chart', () => {
  it('stacks failed on succeeded, scaled to the busiest hour, inside the drawing, its axis dated', () => {
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
    expect([chart.firstLabel, chart.lastLabel]).toEqual(['2026-11-29 00:00:00 UTC', '2026-11-29 02:00:00 UTC']);
  });

  it('draws nothing tall without attempts (no division by zero)', () => {
    const chart = chartOf([{ hour: hour(5), succeeded: 0, failed: 0 }]);
    expect(chart.bars[0]).toMatchObject({ okH: 0, badH: 0 });
  });
});

describe('times as the portal shows them', () => {
  it('one format, UTC to the second, from a Date, an ISO text or epoch milliseconds; a dash for none', () => {
    const shown = '2026-11-29 14:05:09 UTC';
    expect([timeLabel('2026-11-29T14:05:09.120Z'), timeLabel(new Date('2026-11-29T15:05:09+01:00'))]).toEqual([
      shown,
      shown,
    ]);
    expect(timeLabel(Date.UTC(2026, 10, 29, 14, 5, 9))).toBe(shown);
    expect([timeLabel(null), timeLabel(undefined), timeLabel('not a time')]).toEqual(['—', '—', '—']);
  });

  it('formats every ISO time inside a stored text (an error naming when a circuit opened), and nothing else', () => {
    const error = 'destination https://a.example unavailable (circuit open since 2026-11-28T09:30:00.250Z); ended';
    expect(textWithTimes(error)).toBe(
      'destination https://a.example unavailable (circuit open since 2026-11-28 09:30:00 UTC); ended',
    );
    expect(textWithTimes('HTTP 500')).toBe('HTTP 500');
    expect(textWithTimes(null)).toBe('');
  });

  it('reads datetime-local as UTC, seconds optional, and zoned times as given; refuses anything else by field', () => {
    expect(parseTime('from', '2026-11-29T14:05')?.toISOString()).toBe('2026-11-29T14:05:00.000Z');
    expect(parseTime('from', '2026-11-29T14:05:09')?.toISOString()).toBe('2026-11-29T14:05:09.000Z');
    expect(parseTime('from', '2026-11-29T14:05:09+01:00')?.toISOString()).toBe('2026-11-29T13:05:09.000Z');
    expect(parseTime('from', '')).toBeUndefined();
    for (const bad of ['yesterday', '2026-13-40T99:99', '2026-11-29', '1e12']) {
      expect(() => parseTime('to', bad)).toThrow(/^to must be a date and time such as 2026-11-29T14:05:09 \(UTC\)/);
    }
    expect(timeField(new Date('2026-11-29T14:05:00Z'))).toBe('2026-11-29T14:05:00');
    expect(timeField(new Date('2026-11-29T14:05:09.999Z'))).toBe('2026-11-29T14:05:09');
  });
});

describe('ids and URLs in a page', () => {
  it('escape as text and may break only after their separators', () => {
    expect(breakable('https://a.example/x?y=1&z=<b>')).toBe(
      'https://<wbr>a.<wbr>example/<wbr>x?<wbr>y=<wbr>1&amp;<wbr>z=<wbr>&lt;b&gt;',
    );
    expect(breakable('3f1c2a9e-0b7d')).toBe('3f1c2a9e-<wbr>0b7d');
    expect(breakable('http://127.0.0.1:3000')).toBe('http://<wbr>127.<wbr>0.<wbr>0.<wbr>1:<wbr>3000');
    expect(breakable(`"it's"`)).toBe('&quot;it&#39;s&quot;');
    expect(breakable(null)).toBe('');
  });
});

describe('the portal query values', () => {
  it('takes ids, choices, messages, origins and single values strictly', () => {
    expect(parseUuid('companyId', ' 3F1C2A9E-0B7D-4C41-9A55-2F0E8C6D7B10 ')).toBe(
      '3f1c2a9e-0b7d-4c41-9a55-2f0e8c6d7b10',
    );
    expect(() => parseUuid('companyId', "x' OR 1=1")).toThrow(FieldError);
    expect(parseChoice('status', 'failed', ['pending', 'failed'])).toBe('failed');
    expect(() => parseChoice('status', 'sending', ['pending', 'failed'])).toThrow(
      /status must be one of pending, failed/,
    );
    expect([parseMessage('message', '4'), parseMessage('message', '')]).toEqual([4, undefined]);
    expect(() => parseMessage('message', '5')).toThrow(/message must be a message code from 0 to 4/);
    expect(parseOrigin('destination', 'HTTPS://Hooks.Example.com:443')).toBe('https://hooks.example.com');
    for (const bad of ['https://a.example/path', 'ftp://a.example', 'a.example']) {
      expect(() => parseOrigin('destination', bad)).toThrow(/^destination must be an origin/);
    }
    expect(() => single({ a: ['1', '2'] }, 'a')).toThrow(/more than once/);
    expect(single({ a: '1' }, 'a')).toBe('1');
    expect(queryOf({ a: '1', b: undefined, c: '', d: 'x y' })).toBe('a=1&d=x+y');
  });
});
