import type { FastifyInstance, FastifyRequest } from 'fastify';
import { FieldError, parseTime, parseUuid, single } from './portal-format.js';
import { callbackIdOf } from './portal-pages.js';
import { operatorActing, PortalRequest, withSession } from './portal-routes.js';
import { PortalServices } from './portal-services.js';

const form = (req: FastifyRequest) => (req.body ?? {}) as Record<string, unknown>;
const partnerOf = (req: FastifyRequest) => (req as PortalRequest).portal.partnerId;

/**
 * The portal's actions: each a form POST carrying the session's CSRF token (checked before
 * anything is read or done: 403 without it), calling the partner API's own service, answered 303
 * to the page that shows the result. A refusal (404, 409, 422, 429) is a page saying why. In a
 * session an operator's link opened, each is audited naming that operator, by the service in the
 * transaction of the change (`portal.*` actions).
 */
export function registerPortalActions(scope: FastifyInstance, services: PortalServices): void {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- a plugin's closure typed as a method: no `this`
  const action = { ...withSession, preHandler: scope.csrfProtection };

  scope.post('/callbacks/:callbackId/redeliver', action, async (req, reply) => {
    const id = callbackIdOf(req);
    const actor = operatorActing(req, 'portal.callback.redeliver');
    const partnerId = partnerOf(req);
    await services.redelivery.redeliver(id, actor ? { partnerId, actor } : { partnerId });
    return reply.redirect(`/portal/callbacks/${id}?done=redelivered`, 303);
  });

  scope.post('/test', action, async (req, reply) => {
    const f = form(req);
    const companyId = parseUuid('Company id', single(f, 'companyId'));
    if (!companyId) throw new FieldError('Company id is required: the test callback carries that company\'s ids');
    const message = single(f, 'message') ?? '0';
    if (!/^[0-4]$/.test(message)) throw new FieldError('message must be a message code from 0 to 4');
    const url = single(f, 'url')?.trim() || undefined;
    const request = { companyId, url, message: Number(message) };
    const sent = await services.tests.send(partnerOf(req), request, operatorActing(req, 'portal.test-callback.send'));
    return reply.redirect(`/portal/test?callback=${sent.id}`, 303);
  });

  scope.post('/settings', action, async (req, reply) => {
    const url = single(form(req), 'operationsUrl')?.trim() || null;
    await services.profile.setOperationsUrl(partnerOf(req), url, operatorActing(req, 'portal.operations-url.set'));
    return reply.redirect('/portal/settings?done=saved', 303);
  });

  scope.post('/replay', action, async (req, reply) => {
    const f = form(req);
    const since = parseTime('From', single(f, 'from'));
    const until = parseTime('To', single(f, 'to'));
    if (!since || !until) throw new FieldError('From and To are both required');
    const destination = single(f, 'destination') || undefined;
    const window = { since, until, destination };
    const actor = operatorActing(req, 'portal.callback.redeliver-failed');
    const count = actor
      ? await services.replay.replayAsOperator(actor, { ...window, partnerId: partnerOf(req) })
      : await services.replay.replayForPartner(partnerOf(req), window);
    return reply.redirect(`/portal/replay?replayed=${count}`, 303);
  });
}
