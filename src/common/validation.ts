import { registerDecorator, ValidationOptions } from 'class-validator';
import { parseMoney } from './money.js';

/** A positive decimal string with at most two decimals ("1500", "1500.5", "1500.50"). */
export function IsMoneyAmount(options?: ValidationOptions) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'isMoneyAmount',
      target: target.constructor,
      propertyName,
      options: {
        message: `${propertyName} must be a decimal string greater than 0 with at most 2 decimals, e.g. "1500.50"`,
        ...options,
      },
      validator: { validate: (v: unknown) => (parseMoney(v) ?? 0n) > 0n },
    });
}
