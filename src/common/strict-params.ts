// Path ids read exactly as written: a malformed id is a 400 naming its parameter (Nest's
// ParseUUIDPipe names nothing). Query integers: QueryInt in validation.ts.
import { Injectable, PipeTransform, ArgumentMetadata } from '@nestjs/common';
import { invalidProperty } from './domain-error.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A path id: a UUID (docs/partners.md, "Credentials and conventions"), else 400 `<name> must be a UUID`; returned in lower case. */
@Injectable()
export class ParseUuid implements PipeTransform<unknown, string> {
  transform(value: unknown, meta: ArgumentMetadata): string {
    if (typeof value !== 'string' || !UUID.test(value)) throw invalidProperty(`${meta.data ?? 'id'} must be a UUID`);
    return value.toLowerCase();
  }
}
