import { Get, Inject, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Access } from '../operators/index.js';
import { type LinkRefusal, PortalLinks, PortalSessions } from '../partners/index.js';
import { APP_CONFIG, type AppConfig } from '../platform/index.js';
import { PortalCookie, portalCookie } from './portal-cookie.js';
import { single } from './portal-format.js';
import { PageRefusal } from './portal-page.filter.js';
import { Action, Done, FormValues, Page, PortalController, QueryValues, Session } from './portal-page.js';
import type { PortalIdentity } from '../operators/index.js';

/** Why a link opens nothing, as its page says it; each then says how to get a new one. */
const REFUSED: Record<LinkRefusal, string> = {
  used: 'This sign-in link was used already: each link opens the portal once.',
  expired: 'This sign-in link has expired.',
  ended:
    'This sign-in link was ended with your portal sessions (by your operator, or as your API key ' +
    'was replaced at once), or the operator who made it was removed.',
  unknown: 'This is not a sign-in link the portal knows.',
};
const NEW_LINK = 'Get a new one with your API key (POST /v1/partner/portal-links) or from your operator.';

const refused = (why: LinkRefusal) =>
  new PageRefusal(why === 'unknown' ? 404 : 410, 'This link opens nothing', `${REFUSED[why]} ${NEW_LINK}`);

/**
 * The portal's door. A link (`GET /portal/login?token=`) answers a page naming the partner with a
 * **Sign in** button and uses nothing, so a link preview, a mail scanner or a page elsewhere that
 * sends a browser to it opens no session (nor does `HEAD`). Only that button's form `POST`, which
 * the access gate lets through from the portal's own origin alone (`portal-visitor`), uses the
 * link and sets the session's cookie. Sign out ends the session (audited in an operator's).
 */
@PortalController()
export class PortalSignInController {
  private readonly cookie: PortalCookie;

  constructor(
    private readonly links: PortalLinks,
    private readonly sessions: PortalSessions,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.cookie = portalCookie(config.portalBaseUrl);
  }

  @Get('login')
  @Access.portalVisitor()
  @Page('sign-in')
  async linkPage(@QueryValues() q: Record<string, unknown>) {
    const token = single(q, 'token');
    const link = await this.links.peek(token);
    if ('refused' in link) throw refused(link.refused);
    return { title: 'Sign in', token, linkPartner: link.partnerName, expiresAt: link.expiresAt };
  }

  @Post('login')
  @Access.portalVisitor()
  @Action()
  async signIn(
    @FormValues() form: Record<string, unknown>,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Done> {
    const redeemed = await this.links.redeem(single(form, 'token'));
    if ('refused' in redeemed) throw refused(redeemed.refused);
    reply.setCookie(this.cookie.name, redeemed.session, this.cookie.options);
    return { url: '/portal' };
  }

  @Get('signed-out')
  @Access.portalVisitor()
  @Page('notice')
  signedOut() {
    return {
      title: 'Signed out',
      message: 'Your portal session has ended. A new sign-in link opens the portal again.',
    };
  }

  @Post('logout')
  @Action()
  async signOut(@Session() session: PortalIdentity, @Res({ passthrough: true }) reply: FastifyReply): Promise<Done> {
    await this.sessions.end(session);
    reply.clearCookie(this.cookie.name, this.cookie.options);
    return { url: '/portal/signed-out' };
  }
}
