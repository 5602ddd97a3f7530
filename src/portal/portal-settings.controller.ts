import { Get, HttpCode, Post } from '@nestjs/common';
import { OperationalEvents } from '../callbacks/index.js';
import { TestEvents } from '../delivery/index.js';
import type { Actor, AuditActionName, PortalIdentity } from '../operators/index.js';
import { PartnerProfile, PartnerSigning } from '../partners/index.js';
import { SIGNATURE_SCHEMES } from '../platform/index.js';
import { operatorActing } from './operator-acting.js';
import { FieldError, parseChoice, parseUuid, single } from './portal-format.js';
import { Action, Done, FormValues, Page, PortalController, QueryValues, Session } from './portal-page.js';

/** Operational events the settings page shows. */
const RECENT_EVENTS = 20;
/** How often the page asks again while its test event is pending (seconds). */
const REFRESH_S = 2;

/** What an action's redirect says was done (a fixed set: nothing of the URL is shown as given). */
const DONE: Record<string, string> = { saved: 'Saved.' };

/**
 * Settings: the Operations URL (Save, Send a test event), the signature scheme and the public keys
 * to verify with (never a secret), Roll secret and the scheme switch, whose new key is shown once,
 * on the page answering the POST (200: a redirect would have to keep it somewhere), the client
 * certificate, the recent operational events, Sign out. A key change is audited as the API's is:
 * the partner as actor, or the operator whose link opened the session.
 */
@PortalController('settings')
export class PortalSettingsController {
  constructor(
    private readonly profile: PartnerProfile,
    private readonly events: OperationalEvents,
    private readonly testEvents: TestEvents,
    private readonly signing: PartnerSigning,
  ) {}

  @Get()
  @Page('settings')
  async page(@Session() s: PortalIdentity, @QueryValues() q: Record<string, unknown>) {
    const [p, events] = await Promise.all([
      this.profile.view(s.partnerId),
      this.events.list(s.partnerId, { limit: RECENT_EVENTS }),
    ]);
    const eventId = parseUuid('event', single(q, 'event'));
    const testEvent = eventId ? (events.items.find((e) => e.id === eventId) ?? null) : null;
    const refresh = testEvent?.status === 'pending' ? REFRESH_S : null;
    const otherScheme = SIGNATURE_SCHEMES.find((x) => x !== p.signatureScheme)!;
    const done = DONE[single(q, 'done') ?? ''];
    return {
      title: 'Settings',
      nav: 'settings',
      p,
      events: events.items,
      done,
      testEvent,
      refresh,
      otherScheme,
      shownAt: new Date().toISOString(),
    };
  }

  @Post()
  @Action()
  async save(@Session() s: PortalIdentity, @FormValues() form: Record<string, unknown>): Promise<Done> {
    const url = single(form, 'operationsUrl')?.trim() || null;
    await this.profile.setOperationsUrl(s.partnerId, url, operatorActing(s, 'portal.operations-url.set'));
    return { url: '/portal/settings?done=saved' };
  }

  @Post('test-event')
  @Action()
  async sendTestEvent(@Session() s: PortalIdentity): Promise<Done> {
    const id = await this.testEvents.send(s.partnerId, operatorActing(s, 'portal.test-event.send'));
    return { url: `/portal/settings?event=${id}#test-event` };
  }

  @Post('roll-secret')
  @HttpCode(200)
  @Page('new-key')
  async roll(@Session() s: PortalIdentity, @FormValues() form: Record<string, unknown>) {
    const raw = single(form, 'shownAt');
    const shownAt = raw === undefined ? undefined : new Date(raw);
    if (shownAt && Number.isNaN(shownAt.getTime())) throw new FieldError('shownAt must be a time');
    const actor = await this.actor(s, 'partner.signing-secret.rotate', 'portal.signing-secret.rotate');
    const shown = await this.signing.rotate(actor, s.partnerId, shownAt);
    return {
      title: 'New signing key',
      nav: 'settings',
      shown,
      scheme: (await this.profile.view(s.partnerId)).signatureScheme,
    };
  }

  @Post('signature-scheme')
  @HttpCode(200)
  @Page('new-key')
  async switchScheme(@Session() s: PortalIdentity, @FormValues() form: Record<string, unknown>) {
    const scheme = parseChoice('scheme', single(form, 'scheme'), SIGNATURE_SCHEMES);
    if (!scheme) throw new FieldError(`scheme must be one of ${SIGNATURE_SCHEMES.join(', ')}`);
    const actor = await this.actor(s, 'partner.signature-scheme.switch', 'portal.signature-scheme.switch');
    const { signatureScheme, ...shown } = await this.signing.switchScheme(actor, s.partnerId, scheme);
    return { title: 'New signing key', nav: 'settings', shown, scheme: signatureScheme };
  }

  /** Who changes the key, as its audit entry names it: the operator of an operator's link, else the partner. */
  private async actor(s: PortalIdentity, partnerAction: string, operatorAction: AuditActionName): Promise<Actor> {
    const operator = operatorActing(s, operatorAction);
    if (operator) return operator;
    const { id, name } = await this.profile.view(s.partnerId);
    return { partner: { id, name }, action: partnerAction };
  }
}
