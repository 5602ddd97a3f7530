import { Transform } from 'class-transformer';
import { registerDecorator, ValidateIf, ValidationOptions } from 'class-validator';
import { parseMoney } from '../common/money.js';

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

/**
 * A query-string integer, strictly: only plain digits become a number. `@Type(() => Number)`
 * would also take "", " 5", "1e2" or "0x1" (an empty `message=` would even filter on 0); anything
 * else stays a string here, so `@IsInt()` refuses it with a message naming the parameter.
 */
export const QueryInt = () => Transform(({ value }: { value: unknown }) => (typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value));

/**
 * Optional, but not nullable: skips validation only when the property is absent. class-validator's
 * @IsOptional() also lets `null` through, which a change like `{"creditLimit": null}` cannot mean.
 */
export function IsOmittable(options?: ValidationOptions) {
  return ValidateIf((_object: object, value: unknown) => value !== undefined, options);
}
