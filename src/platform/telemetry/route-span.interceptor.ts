import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import type { Observable } from 'rxjs';
import { nameServerSpan } from './trace-context.js';

/** `/admin/v1/companies/:companyId/credit` from the controller's and the handler's paths. */
export function routeOf(
  controllerPath: string | string[] | undefined,
  handlerPath: string | string[] | undefined,
): string {
  const first = (p: string | string[] | undefined) => (Array.isArray(p) ? p[0] : p) ?? '';
  const route = [first(controllerPath), first(handlerPath)]
    .map((p) => p.replace(/^\/+|\/+$/g, ''))
    .filter((p) => p !== '')
    .join('/');
  return `/${route}`;
}

/**
 * Names the request's server span by its route (`PATCH /admin/v1/companies/:companyId/credit`,
 * `http.route`), so that a trace collector groups requests by endpoint rather than by method.
 * Registered only while tracing is on (setup-app.ts); from Nest's own route metadata, whatever
 * the HTTP platform.
 */
@Injectable()
export class RouteSpanInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() === 'http') {
      const pathOf = (target: object) => Reflect.getMetadata(PATH_METADATA, target) as string | string[] | undefined;
      const route = routeOf(pathOf(context.getClass()), pathOf(context.getHandler()));
      nameServerSpan(String(context.switchToHttp().getRequest<{ method?: string }>().method ?? ''), route);
    }
    return next.handle();
  }
}
