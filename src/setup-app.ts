import { INestApplication, ValidationPipe } from '@nestjs/common';
import { SwaggerModule } from '@nestjs/swagger';
import type { Server } from 'node:http';
import { CallbacksAdminService } from './callbacks/callbacks-admin.service.js';
import { DestinationsService } from './destinations/destinations.service.js';
import { mountQueueDashboard } from './delivery/queue-dashboard.js';
import { buildApiDocument } from './common/api-document.js';
import { jsonBody } from './common/json-body.js';
import { AppConfig } from './config/app-config.js';

/**
 * Idle keep-alive connections stay open this long. Node's default (5 s) is shorter than the idle
 * timeout of clients' pools and of load balancers (60 s is common), so a client reusing an idle
 * connection races the server closing it and sees `socket hang up` on a request the service
 * never read. Longer than 60 s, the load balancer or client closes first, which is safe.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** What main.ts and the tests both apply to the Nest application. */
export function setupApp(app: INestApplication, config: AppConfig): void {
  const server = app.getHttpServer() as Server;
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1000; // Node wants it above keepAliveTimeout
  // Nothing tells a scanner what serves it.
  (app.getHttpAdapter().getInstance() as { disable(setting: string): void }).disable('x-powered-by');
  app.use(jsonBody());
  if (config.role !== 'worker') {
    const callbacks = app.get(CallbacksAdminService);
    const destinations = app.get(DestinationsService);
    mountQueueDashboard(app, config, {
      redeliver: (id) => callbacks.redeliver(id),
      redeliverFailed: () => callbacks.redeliverFailed({}),
      attemptNow: (ids) => callbacks.attemptNow(ids),
      destinations: () => destinations.list({}),
    });
  }
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }));
  SwaggerModule.setup('docs', app, buildApiDocument(app, config), { jsonDocumentUrl: 'docs-json' });
}
