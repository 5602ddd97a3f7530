import type { FastifyInstance, FastifyReply } from 'fastify';

/** A page's headers, its scripts and their requests as given: the rest as the portal's. */
const pageHeaders = (scripts: string[]): Readonly<Record<string, string>> => ({
  'content-security-policy': [
    "default-src 'none'",
    ...scripts,
    "style-src 'self'",
    "img-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; '),
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'origin-agent-cluster': '?1',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
});

/**
 * The portal's headers, on every answer under /portal: scripts only from this origin's files (the
 * portal's one, portal.js, which asks again for a page waiting for a result: never inline, never
 * eval), its requests to this origin only, styles from the portal's own stylesheet only (the chart
 * is SVG styled by it), forms posting to the portal only, never framed, no referrer (a link's token
 * never leaves in one), nothing cached or sniffed, and the isolation headers @fastify/helmet sets by
 * default (as the dashboard's have them).
 */
export const PORTAL_HEADERS = pageHeaders(["script-src 'self'", "connect-src 'self'"]);

/** The same for a page that runs no script at all (the partner guide the service serves). */
export const SCRIPTLESS_PAGE_HEADERS = pageHeaders(["script-src 'none'"]);

/** A letter in either case, as itself or percent-encoded. */
const hex = (c: string) => c.charCodeAt(0).toString(16);
const letter = (c: string) => `(?:${c}|%${hex(c)}|%${hex(c.toUpperCase())})`;
/** `/portal` as a request's first path segment, its letters in any case or percent-encoded (as the router reads it). */
const PORTAL_SEGMENT = new RegExp(`^/${[...'portal'].map(letter).join('')}(?:[/?;#]|$)`, 'i');

/** Whether a request target (origin-form, or absolute-form with its origin) is under /portal. */
export function underPortal(target: string | undefined): boolean {
  return PORTAL_SEGMENT.test((target ?? '').replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, ''));
}

/** Sets the portal's headers on an answer under /portal (any other answer is left as it is). */
export function portalHeadersFor(target: string | undefined, reply: FastifyReply): void {
  if (underPortal(target)) reply.headers(PORTAL_HEADERS);
}

/**
 * Every answer under /portal gets the portal's headers as it is sent, whichever part answers: its
 * pages, the access gate's refusals, its 404 page, and the API's 404 for a spelling of /portal the
 * portal's own 404 does not take (`/PORTAL/x`). One hook on the whole server, so none is missed;
 * the router's refusals (an undecodable path), which run no hook, call {@link portalHeadersFor}.
 */
export function installPortalHeaders(instance: FastifyInstance): void {
  instance.addHook('onSend', async (req, reply, payload) => {
    portalHeadersFor(req.url, reply);
    return payload;
  });
}
