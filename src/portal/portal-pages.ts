import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { attemptView, CallbackMessage, callbackView, SHOWN_STATUSES } from '../callbacks/index.js';
import { chartOf, FieldError, hourLabel, parseChoice, parseTime, parseUuid, single, timeField, timeLabel } from './portal-format.js';
import { PortalRequest, Render, withSession } from './portal-routes.js';
import { PortalServices } from './portal-services.js';

/** Callbacks a list page shows. */
export const PORTAL_PAGE_SIZE = 50;
/** Operational events the settings page shows. */
const RECENT_EVENTS = 20;

/** The message codes and names, for the pages' selects. */
export const MESSAGES: [number, string][] = Object.entries(CallbackMessage)
  .filter(([, v]) => typeof v === 'number')
  .map(([name, code]) => [code as number, name]);

/** What every page's template may call. */
const helpers = { time: timeLabel, hour: hourLabel };

const query = (req: FastifyRequest) => req.query as Record<string, unknown>;
const partnerOf = (req: FastifyRequest) => (req as PortalRequest).portal.partnerId;

/** What the actions' redirects say was done (a fixed set: nothing of the URL is shown as given). */
const DONE: Record<string, string> = {
  redelivered: 'Redelivery requested: it is sent again with the same webhook-id.',
  saved: 'Saved.',
};

/** The message filter: a code 0–4, or none. */
function messageOf(raw: string | undefined): CallbackMessage | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^[0-4]$/.test(raw)) throw new FieldError('message must be a message code from 0 to 4');
  return Number(raw);
}

/** The portal's pages (GET): each reads through the partner API's own services, scoped to the session's partner. */
export function registerPortalPages(scope: FastifyInstance, services: PortalServices, render: Render): void {
  scope.get('/', withSession, async (req, reply) => {
    const partnerId = partnerOf(req);
    const [destinations, activity] = await Promise.all([services.destinations.listForPartner(partnerId), services.activity(partnerId)]);
    const open = destinations.filter((d) => d.state !== 'closed');
    return render(reply, 200, 'overview', { ...helpers, title: 'Overview', nav: 'overview', destinations, open, activity, chart: chartOf(activity.hours) });
  });

  scope.get('/callbacks', withSession, async (req, reply) => {
    const q = query(req);
    const status = parseChoice('status', single(q, 'status'), SHOWN_STATUSES);
    const message = messageOf(single(q, 'message'));
    const companyId = parseUuid('companyId', single(q, 'companyId'));
    const from = parseTime('from', single(q, 'from'));
    const to = parseTime('to', single(q, 'to'));
    const cursor = single(q, 'cursor') || undefined;
    const page = await services.callbacks.list({ status, message, companyId, from, to, cursor, limit: PORTAL_PAGE_SIZE }, { partnerId: partnerOf(req) });
    const filters = { status, message: message === undefined ? undefined : String(message), companyId, from: from && timeField(from), to: to && timeField(to) };
    const next = page.nextCursor === null ? null : `/portal/callbacks?${new URLSearchParams({ ...definedOnly(filters), cursor: page.nextCursor }).toString()}`;
    return render(reply, 200, 'callbacks', { ...helpers, title: 'Callbacks', nav: 'callbacks', items: page.items.map((c) => callbackView(c, page.open)), filters, messages: MESSAGES, next, pageSize: PORTAL_PAGE_SIZE });
  });

  scope.get('/callbacks/:callbackId', withSession, async (req, reply) => {
    const id = callbackIdOf(req);
    const { callback, attempts, open } = await services.callbacks.get(id, { partnerId: partnerOf(req) });
    const c = callbackView(callback, open);
    const company = await services.companies.get(partnerOf(req), callback.companyId);
    const done = DONE[single(query(req), 'done') ?? ''];
    return render(reply, 200, 'callback', { ...helpers, title: `Callback ${c.id}`, nav: 'callbacks', c, companyName: company.name, json: callback.body, attempts: attempts.map(attemptView), done, csrf: reply.generateCsrf() });
  });

  scope.get('/test', withSession, async (req, reply) => {
    const id = parseUuid('callback', single(query(req), 'callback'));
    let sent = null;
    if (id) {
      const { callback, attempts, open } = await services.callbacks.get(id, { partnerId: partnerOf(req) });
      const c = callbackView(callback, open);
      sent = { c, attempts: attempts.map(attemptView), settled: c.status !== 'pending' };
    }
    return render(reply, 200, 'test', { ...helpers, title: 'Test callback', nav: 'test', sent, messages: MESSAGES, companyId: sent?.c.companyId, csrf: reply.generateCsrf() });
  });

  scope.get('/settings', withSession, async (req, reply) => {
    const partnerId = partnerOf(req);
    const [p, events] = await Promise.all([services.profile.view(partnerId), services.events.list(partnerId, { limit: RECENT_EVENTS })]);
    const done = DONE[single(query(req), 'done') ?? ''];
    return render(reply, 200, 'settings', { ...helpers, title: 'Settings', nav: 'settings', p, events: events.items, done, csrf: reply.generateCsrf() });
  });

  scope.get('/replay', withSession, async (req, reply) => replayPage(req, reply, services, render));
}

/** Replay: the window's failed callbacks counted first; the Replay button (a POST) confirms. */
async function replayPage(req: FastifyRequest, reply: FastifyReply, services: PortalServices, render: Render) {
  const q = query(req);
  const partnerId = partnerOf(req);
  const from = parseTime('From', single(q, 'from'));
  const to = parseTime('To', single(q, 'to'));
  const destination = single(q, 'destination') || undefined;
  const destinations = (await services.destinations.listForPartner(partnerId)).map((d) => d.origin);
  const replayed = single(q, 'replayed');
  const done = replayed !== undefined && /^\d{1,7}$/.test(replayed) ? `Replay requested: ${replayed} failed callbacks are sent again.` : undefined;
  let count: number | null = null;
  if (from && to) count = await services.replay.countForPartner(partnerId, { since: from, until: to, destination });
  const shown = { from: from && timeField(from), to: to && timeField(to), destination };
  return render(reply, 200, 'replay', { ...helpers, title: 'Replay', nav: 'replay', q: shown, destinations, count, done, csrf: reply.generateCsrf() });
}

/** A path's callback id: a malformed one is refused by name (400), as the API does. */
export function callbackIdOf(req: FastifyRequest): string {
  const id = parseUuid('callbackId', (req.params as Record<string, string>).callbackId);
  if (!id) throw new FieldError('callbackId is missing');
  return id;
}

function definedOnly(o: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(o).filter((e): e is [string, string] => e[1] !== undefined));
}
