import type { FastifyInstance, FastifyRequest } from 'fastify';
import { FieldError, parseTime, parseUuid, single } from './portal-format.js';
import { callbackIdOf } from './portal-pages.js';
import { PortalRequest, withSession } from './portal-routes.js';
import { PortalServices } from './portal-services.js';

const form = (req: FastifyRequest) => (req.body ?? {}) as Record<string, unknown>;
const partnerOf = (req: FastifyRequest) => (req as PortalRequest).portal.partnerId;

/**
 * The portal's actions: each a form POST carrying the session's CSRF token (checked before
 * anything is read or done: 403 without it), calling the partner API's own service, answered 303
 * to the page that shows the result. A refusal (404, 409, 422, 429) is a page saying why.
 */
export function registerPortalActions(scope: FastifyInstance, services: PortalServices): void {
  const action = { ...withSession, preHandler: scope.csrfProtection };

  scope.post('/callbacks/:callbackId/redeliver', action, async (req, reply) => {
    const id = callbackIdOf(req);
    await services.redelivery.redeliver(id, { partnerId: partnerOf(req) });
    return reply.redirect(`/portal/callbacks/${id}?done=redelivered`, 303);
  });

  scope.post('/test', action, async (req, reply) => {
    const f = form(req);
    const companyId = parseUuid('Company id', single(f, 'companyId'));
    if (!companyId) throw new FieldError('Company id is required: the test callback carries that company\'s ids');
    const message = single(f, 'message') ?? '0';
    if (!/^[0-4]$/.test(message)) throw new FieldError('message must be a message code from 0 to 4');
    const url = single(f, 'url')?.trim() || undefined;
    const sent = await services.tests.send(partnerOf(req), { companyId, url, message: Number(message) });
    return reply.redirect(`/portal/test?callback=${sent.id}`, 303);
  });

  scope.post('/settings', action, async (req, reply) => {
    const url = single(form(req), 'operationsUrl')?.trim() || null;
    await services.profile.setOperationsUrl(partnerOf(req), url);
    return reply.redirect('/portal/settings?done=saved', 303);
  });

  scope.post('/replay', action, async (req, reply) => {
    const f = form(req);
    const since = parseTime('From', single(f, 'from'));
    const until = parseTime('To', single(f, 'to'));
    if (!since || !until) throw new FieldError('From and To are both required');
    const destination = single(f, 'destination') || undefined;
    const count = await services.replay.replayForPartner(partnerOf(req), { since, until, destination });
    return reply.redirect(`/portal/replay?replayed=${count}`, 303);
  });
}
