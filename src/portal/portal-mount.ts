import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import helmet from '@fastify/helmet';
import view from '@fastify/view';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Eta } from 'eta';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { GatedRequest } from '../operators/index.js';
import { AppConfig, DomainError, MAX_BODY_BYTES, statusOf, UnexpectedErrorAnswer } from '../platform/index.js';
import { PORTAL_MAX_HOURS } from '../partners/index.js';
import { FieldError } from './portal-format.js';
import { registerPortalActions } from './portal-actions.js';
import { registerPortalPages } from './portal-pages.js';
import { PortalServices } from './portal-services.js';
import { PortalRequest, Render, withoutSession, withSession } from './portal-routes.js';

export const PORTAL_PATH = '/portal';
/** The session cookie: its value is a credential (stored hashed), sent to /portal only. */
export const PORTAL_COOKIE = 'portal_session';
/** Templates and the stylesheet: beside this file in src/ and in dist/ (scripts/build.mjs copies them). */
export const PORTAL_VIEWS = path.join(__dirname, 'views');

/**
 * The portal's headers (@fastify/helmet, on every answer under /portal): no script at all, styles
 * from the portal's own stylesheet only (the chart is SVG styled by it), forms posting to the
 * portal only, never framed, no referrer (a link's token never leaves in one), nothing cached.
 */
export const PORTAL_HEADERS = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      'default-src': ["'none'"],
      'script-src': ["'none'"],
      'style-src': ["'self'"],
      'img-src': ["'self'"],
      'form-action': ["'self'"],
      'frame-ancestors': ["'none'"],
      'base-uri': ["'none'"],
    },
  },
  frameguard: { action: 'deny' as const },
  strictTransportSecurity: false,
  referrerPolicy: { policy: 'no-referrer' as const },
};

/** The page saying how to get a link (401). A browser brought here from another site reloads it once, from this site, so its SameSite=Strict cookie is sent. */
export function signInPage(req: FastifyRequest): string {
  const crossSite = req.headers['sec-fetch-site'] === 'cross-site' && req.headers['sec-fetch-mode'] === 'navigate';
  const refresh = crossSite ? '<meta http-equiv="refresh" content="0">\n' : '';
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
${refresh}<title>Sign in · Partner portal</title><link rel="stylesheet" href="${PORTAL_PATH}/portal.css"></head>
<body><header class="top"><p class="brand">Partner portal</p></header><main id="main">
<h1>Sign in with a link</h1>
<p>The portal opens with a one-time sign-in link; you have no session here, or it ended (after 30 minutes idle, 8 hours at most, or on sign-out).</p>
<p>Get a new link with your API key: <code>POST /v1/partner/portal-links</code> (docs/partners.md, "The portal"), or ask your operator for one. Each link works once, within its lifetime.</p>
</main></body></html>`;
}

/** Mounts the partner portal (docs/partners.md, "The portal") under /portal, behind the access gate. */
export function mountPortal(app: NestFastifyApplication, config: AppConfig): void {
  const services = app.get(PortalServices);
  const instance: FastifyInstance = app.getHttpAdapter().getInstance();
  const unexpected = new UnexpectedErrorAnswer();
  const stylesheet = readFileSync(path.join(PORTAL_VIEWS, 'portal.css'), 'utf8');
  const secure = config.portalBaseUrl.startsWith('https:');
  const cookieOptions = { path: PORTAL_PATH, httpOnly: true, sameSite: 'strict' as const, secure, maxAge: PORTAL_MAX_HOURS * 3600 };
  instance.register(
    async (scope: FastifyInstance) => {
      await scope.register(helmet, PORTAL_HEADERS);
      await scope.register(cookie);
      await scope.register(view, { engine: { eta: new Eta({ views: PORTAL_VIEWS, cache: true }) }, root: PORTAL_VIEWS });
      // The CSRF token's secret is the session's, kept in its row: @fastify/csrf-protection reads it through `session.get`.
      scope.decorateRequest('session', null);
      await scope.register(csrf, { sessionPlugin: '@fastify/secure-session' });
      scope.addHook('preValidation', async (req: FastifyRequest) => {
        const secret = (req as GatedRequest).portal?.csrfSecret;
        (req as unknown as { session: unknown }).session = { get: () => secret, set: () => undefined, options: () => undefined };
      });
      scope.addHook('onSend', async (_req, reply) => {
        reply.header('Cache-Control', 'no-store');
      });
      scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: MAX_BODY_BYTES }, (_req, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(String(body))));
      });
      const render: Render = async (reply, status, template, data) => {
        const req = reply.request as GatedRequest;
        const partnerName = req.portal ? await services.profile.view(req.portal.partnerId).then((p) => p.name) : null;
        return reply.status(status).type('text/html; charset=utf-8').view(template, { partnerName, nav: null, ...data });
      };
      const notice = (reply: FastifyReply, status: number, title: string, message: string, back?: { href: string; label: string }) =>
        render(reply, status, 'notice', { title, message, back, nav: (reply.request as GatedRequest).portal ? 'none' : null });
      scope.setErrorHandler(async (error: FastifyError, _req, reply) => {
        const back = { href: PORTAL_PATH, label: 'Back to the portal' };
        if (error instanceof DomainError) return notice(reply, statusOf(error), 'Not done', error.message, back);
        if (error instanceof FieldError) return notice(reply, 400, 'Not done', error.message, back);
        if (error.code === 'FST_CSRF_MISSING_SECRET' || error.code === 'FST_CSRF_INVALID_TOKEN') {
          return notice(reply, 403, 'Not done', 'This form is out of date or did not come from the portal (its security token is missing or wrong). Nothing was changed: open the page again and resubmit.', back);
        }
        if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) return notice(reply, error.statusCode, 'Not done', error.message, back);
        unexpected.send(error, reply);
        return reply;
      });

      scope.get('/portal.css', withoutSession, async (_req, reply) => reply.type('text/css; charset=utf-8').send(stylesheet));
      scope.get('/login', withoutSession, async (req: FastifyRequest, reply) => {
        const token = (req.query as Record<string, unknown>).token;
        const redeemed = await services.links.redeem(typeof token === 'string' ? token : undefined);
        if ('session' in redeemed) return reply.setCookie(PORTAL_COOKIE, redeemed.session, cookieOptions).redirect(PORTAL_PATH, 303);
        const why = { used: 'This sign-in link was used already: each link opens the portal once.', expired: 'This sign-in link has expired.', unknown: 'This is not a sign-in link the portal knows.' }[redeemed.refused];
        return notice(reply, redeemed.refused === 'unknown' ? 404 : 410, 'This link opens nothing', `${why} Get a new one with your API key (POST /v1/partner/portal-links) or from your operator.`);
      });
      scope.get('/signed-out', withoutSession, async (_req, reply) =>
        notice(reply, 200, 'Signed out', 'Your portal session has ended. A new sign-in link opens the portal again.'),
      );
      scope.post('/logout', { ...withSession, preHandler: scope.csrfProtection }, async (req, reply) => {
        await services.sessions.end((req as PortalRequest).portal.id);
        return reply.clearCookie(PORTAL_COOKIE, { path: PORTAL_PATH }).redirect(`${PORTAL_PATH}/signed-out`, 303);
      });
      registerPortalPages(scope, services, render);
      registerPortalActions(scope, services);
    },
    { prefix: PORTAL_PATH },
  );
}
