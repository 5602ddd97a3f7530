import { formatMoney, moneyFromDb, parseMoney } from './money.js';

describe('money', () => {
  it.each([
    ['1500', 150000n],
    ['1500.5', 150050n],
    ['1500.50', 150050n],
    ['0.01', 1n],
    ['0', 0n],
    ['999999999999999.99', 99999999999999999n],
  ])('parses %s as %s minor units', (raw, cents) => {
    expect(parseMoney(raw)).toBe(cents);
  });

  it.each([
    ['1500.505'],
    ['-1'],
    ['1e3'],
    ['01'],
    ['.5'],
    ['5.'],
    [''],
    [' 1'],
    ['1,5'],
    ['1000000000000000'],
    [1500],
    [null],
  ])('refuses %p', (raw) => {
    expect(parseMoney(raw)).toBeNull();
  });

  it.each([
    [150050n, '1500.50'],
    [1n, '0.01'],
    [0n, '0.00'],
    [-250n, '-2.50'],
    [99999999999999999n, '999999999999999.99'],
  ])('formats %s as %s', (cents, text) => {
    expect(formatMoney(cents)).toBe(text);
  });

  it.each([
    ['1500.50', 150050n],
    ['7', 700n],
    ['-3.10', -310n],
    ['0.00', 0n],
  ])('reads numeric %s from the database', (raw, cents) => {
    expect(moneyFromDb(raw)).toBe(cents);
  });

  it('adds without floating-point drift', () => {
    const sum = [parseMoney('0.10'), parseMoney('0.20')].reduce((a, b) => a! + b!, 0n)!;
    expect(formatMoney(sum)).toBe('0.30');
  });
});
