import {
  answerRouterRefusal,
  AppConfig,
  buildApiDocument,
  GUIDE_PATH,
  MAX_BODY_BYTES,
  mountPartnerDocs,
  registerBodyParsers,
  RouteSpanInterceptor,
  StrictValidationPipe,
  tracingActive,
} from './platform/index.js';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SwaggerModule } from '@nestjs/swagger';
import { AccessGate, installRouteAccess, MountAccess } from './operators/index.js';
import { CallbackBody, OPERATIONAL_EVENT_MODELS } from './callbacks/index.js';
import { DASHBOARD_ACCESS, dashboardDocument } from './delivery/index.js';
import { portalHeadersFor, SCRIPTLESS_PAGE_HEADERS } from './portal/index.js';

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
    // The router's refusals run no hook: one under /portal gets the portal's headers here.
    frameworkErrors: (error: Error, req: FastifyRequest, reply: FastifyReply) => {
      portalHeadersFor(req.raw.url, reply);
      answerRouterRefusal(error, req, reply);
    },
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH, ignoreTrailingSlash: true, caseSensitive: false },
  });
}

/**
 * Where the OpenAPI document and Swagger UI are served, and the partner guide with the partners'
 * routes alone below it: to anyone (they hold no partner's data).
 */
const DOCS_PATH = 'docs';
const DOCS_ACCESS: MountAccess[] = [
  GUIDE_PATH,
  ...['', '-json', '-yaml'].map((suffix) => `/${DOCS_PATH}${suffix}`),
].map((prefix) => ({
  prefix,
  access: () => ({ to: 'anyone' }),
}));

/** What main.ts and the tests both apply to the Nest application (before `init`/`listen`). */
export function setupApp(app: NestFastifyApplication, config: AppConfig): void {
  // First: every route registered from here on is behind the access gate, or the start stops.
  installRouteAccess(app.getHttpAdapter().getInstance(), app.get(AccessGate), [DASHBOARD_ACCESS, ...DOCS_ACCESS]);
  const server = app.getHttpServer();
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1000; // Node wants it above keepAliveTimeout
  registerBodyParsers(app.getHttpAdapter().getInstance());
  if (tracingActive()) app.useGlobalInterceptors(new RouteSpanInterceptor());
  app.useGlobalPipes(new StrictValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }));
  const parts = {
    models: [CallbackBody, ...OPERATIONAL_EVENT_MODELS],
    paths: config.role === 'worker' ? {} : dashboardDocument(),
  };
  const document = buildApiDocument(app, config, parts);
  SwaggerModule.setup(DOCS_PATH, app, document, { jsonDocumentUrl: 'docs-json' });
  if (config.role !== 'worker') mountPartnerDocs(app, document, SCRIPTLESS_PAGE_HEADERS);
}
