import cookiePlugin from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import view from '@fastify/view';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { GatedRequest } from '../operators/index.js';
import { AppConfig, DomainError, MAX_BODY_BYTES, statusOf, UnexpectedErrorAnswer } from '../platform/index.js';
import { FieldError } from './portal-format.js';
import { registerPortalActions } from './portal-actions.js';
import { portalCookie } from './portal-cookie.js';
import { installPortalHeaders } from './portal-headers.js';
import { registerPortalPages } from './portal-pages.js';
import { PortalServices } from './portal-services.js';
import { asVisitor, Notice, Render } from './portal-routes.js';
import { PORTAL_PATH, registerSignIn } from './portal-sign-in.js';
import { PORTAL_VIEWS, portalViews } from './portal-views.js';

const BACK = { href: PORTAL_PATH, label: 'Back to the portal' };

/**
 * Mounts the partner portal (docs/partners.md, "The portal") under /portal, behind the access gate.
 * Any other path or method under it (OPTIONS included) is the portal's 404 page; every answer
 * under /portal carries the portal's headers (portal-headers.ts).
 */
export function mountPortal(app: NestFastifyApplication, config: AppConfig): void {
  const services = app.get(PortalServices);
  const instance: FastifyInstance = app.getHttpAdapter().getInstance();
  const unexpected = new UnexpectedErrorAnswer();
  const stylesheet = readFileSync(path.join(PORTAL_VIEWS, 'portal.css'), 'utf8');
  const cookie = portalCookie(config.portalBaseUrl);
  installPortalHeaders(instance);
  instance.register(
    async (scope: FastifyInstance) => {
      await scope.register(cookiePlugin);
      await scope.register(view, { engine: { eta: portalViews }, root: PORTAL_VIEWS });
      // The CSRF token's secret is the session's, kept in its row: @fastify/csrf-protection reads it through `session.get`.
      scope.decorateRequest('session', null);
      await scope.register(csrf, { sessionPlugin: '@fastify/secure-session' });
      scope.addHook('preValidation', (req: FastifyRequest, _reply, done) => {
        const secret = (req as GatedRequest).portal?.csrfSecret;
        (req as unknown as { session: unknown }).session = { get: () => secret, set: () => undefined, options: () => undefined };
        done();
      });
      scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: MAX_BODY_BYTES }, (_req, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(String(body))));
      });
      const render: Render = async (reply, status, template, data) => {
        const req = reply.request as GatedRequest;
        const partnerName = req.portal ? await services.profile.view(req.portal.partnerId).then((p) => p.name) : null;
        return reply.status(status).type('text/html; charset=utf-8').view(template, { partnerName, nav: null, ...data });
      };
      const notice: Notice = (reply, status, title, message, back) =>
        render(reply, status, 'notice', { title, message, back, nav: (reply.request as GatedRequest).portal ? 'none' : null });
      scope.setErrorHandler(async (error: FastifyError, _req, reply) => {
        if (error instanceof DomainError) {
          if (error.retryAfterS !== undefined) reply.header('Retry-After', String(error.retryAfterS));
          return notice(reply, statusOf(error), 'Not done', error.message, BACK);
        }
        if (error instanceof FieldError) return notice(reply, 400, 'Not done', error.message, BACK);
        if (error.code === 'FST_CSRF_MISSING_SECRET' || error.code === 'FST_CSRF_INVALID_TOKEN') {
          const why = 'This form is out of date or did not come from the portal (its security token is missing or '
            + 'wrong).';
          return notice(reply, 403, 'Not done', `${why} Nothing was changed: open the page again and resubmit.`, BACK);
        }
        if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
          return notice(reply, error.statusCode, 'Not done', error.message, BACK);
        }
        unexpected.send(error, reply);
        return reply;
      });
      // Any other path or method under /portal (OPTIONS too): a page.
      scope.setNotFoundHandler(async (_req, reply) =>
        notice(reply, 404, 'Not found', 'The portal has no page here.', BACK),
      );

      scope.get('/portal.css', asVisitor, async (_req, reply) =>
        reply.type('text/css; charset=utf-8').send(stylesheet),
      );
      registerSignIn(scope, services, cookie, render, notice);
      registerPortalPages(scope, services, render);
      registerPortalActions(scope, services);
    },
    { prefix: PORTAL_PATH },
  );
}
