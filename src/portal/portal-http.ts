import cookiePlugin from '@fastify/cookie';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parse } from 'fast-querystring';
import type { RouteAccess } from '../operators/index.js';
import { MAX_BODY_BYTES } from '../platform/index.js';
import { installPortalHeaders } from './portal-headers.js';
import { HELPERS } from './portal-layout.js';
import { PORTAL_VIEWS, portalViews } from './portal-views.js';

/** A route of the portal's (a page or the sign-in), by the access it declares. */
const isPortalRoute = (req: FastifyRequest) =>
  ((req.routeOptions.config as { access?: RouteAccess } | undefined)?.access?.to ?? '').startsWith('portal-');

/**
 * What the portal's controllers need of the HTTP server beside their routes: Nest's view
 * rendering (`@fastify/view` with eta, the templates in views/), form bodies read on the portal's
 * routes only (elsewhere a form is dropped, as any body not JSON: json-body.ts), the session
 * cookie written (`@fastify/cookie`; read by the access gate from the header, so no parsing hook),
 * the portal's headers on every answer under /portal, and its 404 page for any other path or
 * method there. Registered as the module starts, before the server is ready.
 */
@Injectable()
export class PortalHttp implements OnModuleInit {
  constructor(private readonly host: HttpAdapterHost) {}

  onModuleInit(): void {
    const adapter = this.host.httpAdapter as FastifyAdapter;
    const instance: FastifyInstance = adapter.getInstance();
    installPortalHeaders(instance);
    // After the queue dashboard's own @fastify/view (in its scope; delivery, imported here, starts first).
    adapter.setViewEngine({ engine: { eta: portalViews }, templates: PORTAL_VIEWS });
    instance.register(cookiePlugin, { hook: false });
    instance.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: MAX_BODY_BYTES },
      (req, body, done) => done(null, isPortalRoute(req) ? parse(String(body)) : undefined),
    );
    instance.register(
      (scope: FastifyInstance, _options, done) => {
        scope.setNotFoundHandler(async (_req, reply) =>
          reply.status(404).type('text/html; charset=utf-8').send(portalViews.render('notice', notFound)),
        );
        done();
      },
      { prefix: '/portal' },
    );
  }
}

/** The 404 page under /portal: no session is read for it (no route ran the gate). */
const notFound = {
  ...HELPERS,
  partnerName: null,
  nav: null,
  csrf: null,
  title: 'Not found',
  message: 'The portal has no page here.',
  back: { href: '/portal', label: 'Back to the portal' },
};
