import { Eta } from 'eta';
import type { FastifyRequest } from 'fastify';
import path from 'node:path';
import { HELPERS } from './portal-layout.js';

/** Templates, stylesheet and script: beside this file in src/ and in dist/ (scripts/build.mjs copies them). */
export const PORTAL_VIEWS = path.join(__dirname, 'views');

/** The portal's templates (eta escapes `<%= %>`): Nest's view engine, and the refusals' pages below. */
export const portalViews = new Eta({ views: PORTAL_VIEWS, cache: true });

/** What the layout needs on a page without a session: no partner named, no navigation, no form. */
const NO_SESSION = { ...HELPERS, partnerName: null, nav: null, csrf: null };

/**
 * The page of a refusal the access gate answers under /portal, before any handler: without a
 * session (401) how to get a sign-in link; a change from another site (403); too many requests
 * (429, its Retry-After header set by the gate). A browser brought to the 401 page from another
 * site reloads it once, from this site, so its SameSite=Strict cookie is sent.
 */
export function refusalPage(req: FastifyRequest, status: 401 | 403 | 429, message: string): string {
  if (status === 401) {
    const crossSite = req.headers['sec-fetch-site'] === 'cross-site' && req.headers['sec-fetch-mode'] === 'navigate';
    return portalViews.render('no-session', { ...NO_SESSION, title: 'Sign in', reload: crossSite });
  }
  const title = status === 429 ? 'Too many requests' : 'Not done';
  return portalViews.render('notice', { ...NO_SESSION, title, message });
}
