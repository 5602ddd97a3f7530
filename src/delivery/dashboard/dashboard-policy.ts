import type { DashboardJobKind } from './dashboard-job.js';

/**
 * What the queue dashboard lets an operator do. PostgreSQL is the record of every callback, so
 * an action either has a meaning there or is switched off: Retry on a failed callback (a
 * redelivery) and Promote on a delayed job (attempt now) stay, one job or all of a tab; adding,
 * editing, duplicating, rescheduling, removing, cleaning, emptying, pausing, rate limits and
 * concurrency would change Redis behind the database's back and are refused.
 */
export const SWITCHED_OFF =
  'Switched off: the queue follows PostgreSQL. Retry a failed job or promote a delayed one here; ' +
  'anything else through the operator API (/admin/v1/callbacks).';

/**
 * An operational event is never redelivered (the callback routes answer 404 for its delivery):
 * it tells a state that has passed, and the next change sends a new one.
 */
export const EVENT_NOT_REDELIVERED =
  "Retry is switched off for an operational event's delivery: an operational event is not redelivered " +
  '(the next change sends a new one); read it at GET /admin/v1/partners/{partnerId}/events.';

/** A rule's answer: null to allow, else why it is refused. */
const allowedIf = (allowed: boolean): string | null => (allowed ? null : SWITCHED_OFF);

/** bull-board route patterns (as its router declares them) that write and stay allowed, and when. */
const ALLOWED_WRITES: Record<string, (p: DashboardRequestParams) => string | null> = {
  'put /api/queues/:queueName/:jobId/retry': (p) =>
    p.jobKind === 'operational-event' ? EVENT_NOT_REDELIVERED : allowedIf(p.jobState === 'failed'),
  // Retry all replays failed callbacks only (never an operational event's delivery).
  'put /api/queues/:queueName/retry/:queueStatus': (p) => allowedIf(p.queueStatus === 'failed'),
  // Promote means "attempt now": a callback already due only waits for room at its destination.
  'put /api/queues/:queueName/:jobId/promote': (p) => allowedIf(p.jobState === 'delayed'),
  'put /api/queues/:queueName/promote': () => null,
};

export interface DashboardRequestParams {
  queueStatus?: string;
  /** The job's current state (its callback's tab), looked up for a single-job retry or promote. */
  jobState?: string;
  /** What the job delivers, looked up with its state. */
  jobKind?: DashboardJobKind;
}

/** Why a request is refused, or null: reads are allowed; a write only when listed above. */
export function dashboardRefusal(method: string, route: string, params: DashboardRequestParams): string | null {
  if (method.toLowerCase() === 'get') return null;
  const rule = ALLOWED_WRITES[`${method.toLowerCase()} ${route}`];
  return rule === undefined ? SWITCHED_OFF : rule(params);
}

/**
 * bull-board's UI shows every job action whenever a queue is writable (its only switches are
 * read-only, which would take Retry and Promote too, and retries). These rules hide the buttons
 * of switched-off actions: in its job and tab action lists every item but those with the Retry
 * (refresh) or Promote (corner-up-left) icon, and the queue menus (add job, pause, empty,
 * concurrency, rate limit…). bull-board's CSS-module class names end in a build hash, hence the
 * prefix matches. The browser test checks that exactly Retry and Promote are left.
 */
export const DASHBOARD_CSS =
  [
    '[class*="jobActions-"] > li:not(:has(.lucide-refresh-cw, .lucide-corner-up-left))',
    '[class*="queueActions-"] > li:not(:has(.lucide-refresh-cw, .lucide-corner-up-left))',
    'button[aria-haspopup="menu"]:has(> .lucide-ellipsis-vertical)',
  ].join(',\n') + ' { display: none !important; }';

/**
 * The dashboard's security headers, through @fastify/helmet on every answer under its path: a
 * content security policy its own page passes (its scripts, styles and images are its own; inline
 * styles only, which bull-board's page uses; no framing by any page: `frame-ancestors 'none'`,
 * and `X-Frame-Options: DENY` for older browsers), `nosniff`, no referrer. No HSTS: whether the
 * host is HTTPS-only is the TLS terminator's to say, for every path of it. The browser test checks
 * that the page runs with no violation and that another site cannot frame it.
 */
export const DASHBOARD_HEADERS = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      'default-src': ["'self'"],
      'base-uri': ["'self'"],
      'connect-src': ["'self'"],
      'font-src': ["'self'", 'data:'],
      'form-action': ["'self'"],
      'frame-ancestors': ["'none'"],
      'img-src': ["'self'", 'data:'],
      'object-src': ["'none'"],
      'script-src': ["'self'"],
      'script-src-attr': ["'none'"],
      'style-src': ["'self'", "'unsafe-inline'"],
    },
  },
  frameguard: { action: 'deny' as const },
  strictTransportSecurity: false,
  referrerPolicy: { policy: 'no-referrer' as const },
};

/**
 * The dashboard's HTML page, adjusted: no stylesheet from the internet (bull-board links web
 * fonts from Google; the page falls back to system fonts, so it never waits on the internet),
 * and our rules hiding switched-off buttons.
 */
export function dashboardPage(html: string): string {
  return html
    .replace(/<link\b[^>]*\bhref="https?:\/\/[^"]*"[^>]*>\s*/gi, '')
    .replace('</head>', `<style id="funding-dashboard">${DASHBOARD_CSS}</style></head>`);
}

export interface CircuitView {
  origin: string;
  state: string;
  openedAt: string | null;
  nextProbeAt: string | null;
  lastError: string | null;
  waiting: number;
}

/**
 * Destinations with an open circuit, as the queue's description (shown under the queue's name on
 * every page of the dashboard): their callbacks wait in PostgreSQL, not in the queue, so without
 * this line an operator would see nothing of an outage.
 */
export function circuitsDescription(destinations: CircuitView[]): string {
  const open = destinations.filter((d) => d.state !== 'closed');
  if (open.length === 0) return 'All destinations closed (healthy).';
  const one = (d: CircuitView) =>
    `${d.origin} ${d.state.replace('_', '-')} since ${d.openedAt ?? '?'}, ${d.waiting} waiting, ` +
    `next probe ${d.nextProbeAt ?? '?'}` +
    (d.lastError ? ` (last error: ${d.lastError})` : '');
  return `Open circuits (${open.length}): ${open.map(one).join('; ')}.`;
}
