// Money is integer minor units (cents) in a bigint: never a float. The API speaks decimal
// strings with at most two decimals; PostgreSQL stores numeric(18,2).
import { ValueTransformer } from 'typeorm';

const INPUT = /^(0|[1-9]\d{0,14})(\.\d{1,2})?$/;
/** For the OpenAPI document: what an input amount looks like (it must also be above 0). */
export const MONEY_INPUT_PATTERN = INPUT.source;

/** Parses an API amount ("1500", "1500.5", "1500.50"); null when not a valid decimal string. */
export function parseMoney(raw: unknown): bigint | null {
  if (typeof raw !== 'string' || !INPUT.test(raw)) return null;
  const [whole, frac = ''] = raw.split('.');
  return BigInt(whole) * 100n + BigInt(frac.padEnd(2, '0'));
}

/** Formats minor units as the API's decimal string with exactly two decimals. */
export function formatMoney(cents: bigint): string {
  const sign = cents < 0n ? '-' : '';
  const abs = cents < 0n ? -cents : cents;
  return `${sign}${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}`;
}

/** Reads PostgreSQL's numeric text ("1500.50", "-3.00", "7") into minor units. */
export function moneyFromDb(raw: string): bigint {
  const m = /^(-?)(\d+)(?:\.(\d{1,2})\d*)?$/.exec(raw);
  if (!m) throw new Error(`not a numeric value: ${raw}`);
  const cents = BigInt(m[2]) * 100n + BigInt((m[3] ?? '').padEnd(2, '0'));
  return m[1] ? -cents : cents;
}

export const moneyColumn: ValueTransformer = {
  to: (v: bigint | null | undefined) => (v === null || v === undefined ? v : formatMoney(v)),
  from: (v: string | null) => (v === null ? null : moneyFromDb(v)),
};
