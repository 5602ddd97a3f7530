import { ArgumentMetadata, BadRequestException, Type, ValidationPipe } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { getMetadataStorage, registerDecorator, ValidateIf, ValidationOptions } from 'class-validator';
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
export const QueryInt = () =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value,
  );

/**
 * Optional, but not nullable: skips validation only when the property is absent. class-validator's
 * @IsOptional() also lets `null` through, which a change like `{"creditLimit": null}` cannot mean.
 */
export function IsOmittable(options?: ValidationOptions) {
  return ValidateIf((_object: object, value: unknown) => value !== undefined, options);
}

/** The properties a DTO class declares (any validation decorator), in declaration order, its parents' first. */
export function declaredProperties(type: Type): string[] {
  const metadatas = getMetadataStorage().getTargetValidationMetadatas(type, '', true, false);
  const chain: unknown[] = [];
  for (let c: unknown = type; typeof c === 'function' && c !== Function.prototype; c = Object.getPrototypeOf(c))
    chain.unshift(c);
  return [...new Set(chain.flatMap((c) => metadatas.filter((x) => x.target === c).map((x) => x.propertyName)))];
}

/** At most this many unknown query parameters are named: a hostile query string cannot grow the answer. */
const NAMED_UNKNOWN = 10;

/** The refusal of unknown query parameters: each named as one, with the parameters the route accepts. */
export function unknownQueryParameters(unknown: string[], accepted: string[]): string[] {
  const list = accepted.length > 0 ? `accepted: ${accepted.join(', ')}` : 'this operation takes none';
  const named = unknown.slice(0, NAMED_UNKNOWN).map((name) => `query parameter ${name} is not accepted; ${list}`);
  return unknown.length > NAMED_UNKNOWN
    ? [...named, `and ${unknown.length - NAMED_UNKNOWN} more unknown query parameters`]
    : named;
}

/**
 * The one validation of bodies, queries and params (class-validator through Nest's pipe, unknown
 * properties refused). A query's unknown parameter is named as a query parameter, with the ones
 * the route accepts — a query is typed by hand, often from memory of another route — rather than
 * as a property that "should not exist". Its other errors are reported beside it, as ever.
 */
export class StrictValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const type = metadata.metatype;
    if (metadata.type !== 'query' || !type || typeof value !== 'object' || value === null || Array.isArray(value))
      return super.transform(value, metadata);
    const accepted = declaredProperties(type);
    const unknown = Object.keys(value).filter((k) => !accepted.includes(k));
    if (unknown.length === 0) return super.transform(value, metadata);
    const known = Object.fromEntries(Object.entries(value).filter(([k]) => accepted.includes(k)));
    const others = await super.transform(known, metadata).then(
      () => [],
      (e: unknown) => {
        if (e instanceof BadRequestException)
          return [(e.getResponse() as { message?: string | string[] }).message ?? []].flat();
        throw e;
      },
    );
    throw new BadRequestException([...unknownQueryParameters(unknown, accepted), ...others]);
  }
}
