import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { LinkRefusal } from '../partners/index.js';
import { single, timeLabel } from './portal-format.js';
import { PortalCookie } from './portal-cookie.js';
import { asVisitor, Notice, PortalRequest, Render, withSession } from './portal-routes.js';
import { PortalServices } from './portal-services.js';

export const PORTAL_PATH = '/portal';

/** Why a link opens nothing, as its page says it; each then says how to get a new one. */
const REFUSED: Record<LinkRefusal, string> = {
  used: 'This sign-in link was used already: each link opens the portal once.',
  expired: 'This sign-in link has expired.',
  ended:
    'This sign-in link was ended with your portal sessions (by your operator, or as your API key '
    + 'was replaced at once), or the operator who made it was removed.',
  unknown: 'This is not a sign-in link the portal knows.',
};
const NEW_LINK = 'Get a new one with your API key (POST /v1/partner/portal-links) or from your operator.';

/**
 * The portal's door. A link (`GET /portal/login?token=`) answers a page naming the partner with a
 * **Sign in** button and uses nothing, so a link preview, a mail scanner or a page elsewhere that
 * sends a browser to it opens no session (nor does `HEAD`). Only that button's form `POST`, which
 * the access gate lets through from the portal's own origin alone (`portal-visitor`), uses the
 * link and sets the session's cookie. Sign out ends the session (audited in an operator's).
 */
export function registerSignIn(
  scope: FastifyInstance,
  services: PortalServices,
  cookie: PortalCookie,
  render: Render,
  notice: Notice,
): void {
  const refused = (reply: FastifyReply, why: LinkRefusal) =>
    notice(reply, why === 'unknown' ? 404 : 410, 'This link opens nothing', `${REFUSED[why]} ${NEW_LINK}`);

  scope.get('/login', asVisitor, async (req: FastifyRequest, reply) => {
    const token = single(req.query as Record<string, unknown>, 'token');
    const link = await services.links.peek(token);
    if ('refused' in link) return refused(reply, link.refused);
    const page = { title: 'Sign in', token, linkPartner: link.partnerName, expiresAt: link.expiresAt, time: timeLabel };
    return render(reply, 200, 'sign-in', page);
  });

  scope.post('/login', asVisitor, async (req: FastifyRequest, reply) => {
    const redeemed = await services.links.redeem(single((req.body ?? {}) as Record<string, unknown>, 'token'));
    if ('refused' in redeemed) return refused(reply, redeemed.refused);
    return reply.setCookie(cookie.name, redeemed.session, cookie.options).redirect(PORTAL_PATH, 303);
  });

  scope.get('/signed-out', asVisitor, async (_req, reply) =>
    notice(reply, 200, 'Signed out', 'Your portal session has ended. A new sign-in link opens the portal again.'),
  );

  // eslint-disable-next-line @typescript-eslint/unbound-method -- a plugin's closure typed as a method: no `this`
  scope.post('/logout', { ...withSession, preHandler: scope.csrfProtection }, async (req, reply) => {
    await services.sessions.end((req as PortalRequest).portal);
    return reply.clearCookie(cookie.name, cookie.options).redirect(`${PORTAL_PATH}/signed-out`, 303);
  });
}
