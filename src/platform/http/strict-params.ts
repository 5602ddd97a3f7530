// Path ids read exactly as written: a malformed id is a 400 naming its parameter (Nest's
// ParseUUIDPipe names nothing). Query integers: QueryInt in validation.ts. Operations that take
// no query at all: NoQuery.
import {
  applyDecorators,
  ArgumentMetadata,
  CanActivate,
  ExecutionContext,
  Injectable,
  PipeTransform,
  UseGuards,
} from '@nestjs/common';
import { ApiErrors } from '../openapi/api-doc.js';
import { invalidProperty } from './domain-error.js';
import { unknownQueryParameters } from './validation.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A path id: a UUID (docs/partners.md, "Credentials and conventions"), else 400 `<name> must be a
 * UUID`; returned in lower case.
 */
@Injectable()
export class ParseUuid implements PipeTransform<unknown, string> {
  transform(value: unknown, meta: ArgumentMetadata): string {
    if (typeof value !== 'string' || !UUID.test(value)) throw invalidProperty(`${meta.data ?? 'id'} must be a UUID`);
    return value.toLowerCase();
  }
}

/**
 * An operation that takes no query: a query parameter is refused (400 naming it) like any other
 * unknown property (docs/architecture.md, "Input and security"), rather than silently ignored. For the
 * unauthenticated operations, whose callers (probes, scrapers, firewalls' scripts) send none.
 */
@Injectable()
export class NoQueryGuard implements CanActivate {
  canActivate(ctx: ExecutionContext): boolean {
    const query = ctx.switchToHttp().getRequest<{ query?: Record<string, unknown> }>().query ?? {};
    const [first] = Object.keys(query);
    if (first !== undefined) throw invalidProperty(unknownQueryParameters([first], [])[0]);
    return true;
  }
}

/** Refuses any query parameter ({@link NoQueryGuard}), and says so in the OpenAPI document. */
export const NoQuery = () =>
  applyDecorators(
    UseGuards(NoQueryGuard),
    ApiErrors({ 400: 'a query parameter: this operation takes none (the message names it)' }),
  );
