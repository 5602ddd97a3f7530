import { ValidationPipe } from '@nestjs/common';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule } from '@nestjs/swagger';
import { CallbackRepairs } from './callbacks/callback-repairs.js';
import { DestinationsService } from './destinations/destinations.service.js';
import { mountQueueDashboard } from './delivery/queue-dashboard.js';
import { buildApiDocument } from './common/api-document.js';
import { answerRouterRefusal } from './common/framework-errors.js';
import { MAX_BODY_BYTES, registerBodyParsers } from './common/json-body.js';
import { AppConfig } from './config/app-config.js';
import { RouteSpanInterceptor } from './telemetry/route-span.interceptor.js';
import { tracingActive } from './telemetry/trace-context.js';

/**
 * Idle keep-alive connections stay open this long. Node's default (5 s) is shorter than the idle
 * timeout of clients' pools and of load balancers (60 s is common), so a client reusing an idle
 * connection races the server closing it and sees `socket hang up` on a request the service
 * never read. Longer than 60 s, the load balancer or client closes first, which is safe.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/**
 * A path parameter may be this long before the router itself refuses the request (Fastify's
 * default, 100, would answer 414 where the parameter's validation names the field in a 400).
 */
const MAX_PARAM_LENGTH = 8 * 1024;

/**
 * The HTTP platform under Nest: Fastify (it sends no `X-Powered-By` or other banner). Routing as
 * the service always answered: `/health/` is `/health`, and the path's case does not matter.
 */
export function createHttpAdapter(): FastifyAdapter {
  return new FastifyAdapter({
    bodyLimit: MAX_BODY_BYTES,
    frameworkErrors: answerRouterRefusal,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH, ignoreTrailingSlash: true, caseSensitive: false },
  });
}

/** What main.ts and the tests both apply to the Nest application (before `init`/`listen`). */
export function setupApp(app: NestFastifyApplication, config: AppConfig): void {
  const server = app.getHttpServer();
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1000; // Node wants it above keepAliveTimeout
  registerBodyParsers(app.getHttpAdapter().getInstance());
  if (config.role !== 'worker') {
    const repairs = app.get(CallbackRepairs);
    const destinations = app.get(DestinationsService);
    mountQueueDashboard(app, config, {
      redeliver: (actor, id) => repairs.redeliver(actor, id),
      redeliverFailed: (actor) => repairs.redeliverFailed(actor, {}),
      promote: (actor, id) => repairs.promote(actor, id),
      promotePage: (actor, ids) => repairs.promotePage(actor, ids),
      destinations: () => destinations.list({}),
    });
  }
  if (tracingActive()) app.useGlobalInterceptors(new RouteSpanInterceptor());
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }));
  SwaggerModule.setup('docs', app, buildApiDocument(app, config), { jsonDocumentUrl: 'docs-json' });
}
