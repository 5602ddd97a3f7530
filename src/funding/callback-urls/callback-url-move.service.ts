import { Injectable } from '@nestjs/common';
import { CallbackUrlValidator } from '../../egress/index.js';
import type { Actor } from '../../operators/index.js';
import { invalidProperty } from '../../platform/index.js';
import { DomainTransitions } from '../domain/domain-transitions.js';

/**
 * At most this many resources move at once. Measured on the development machine (2 shared cores),
 * each company with a waiting callback: 100,000 held their companies locked for 12–14 s, most of it
 * rewriting the callbacks that follow, while their other changes waited; 10,000 took 2–3.5 s
 * (docs/architecture.md, "Changing a callback URL").
 */
export const URL_MOVE_LIMIT = 10_000;

/**
 * A partner moves every resource registered with one URL to another (POST /v1/callback-urls/move):
 * `to` is checked exactly as at creation (400 naming `to`), `from` is looked up in the stored form
 * of URLs; then the domain's one transaction (DomainTransitions.moveUrl).
 */
@Injectable()
export class CallbackUrlMove {
  constructor(
    private readonly urls: CallbackUrlValidator,
    private readonly transitions: DomainTransitions,
  ) {}

  /** How many resources now use `to`. `actor`: an operator moving it in the partner's portal (audited). */
  async move(partnerId: string, body: { from: string; to: string }, actor?: Actor): Promise<number> {
    const to = (await this.urls.check('to', body.to))!;
    const from = this.urls.storedForm(body.from);
    if (to === from) throw invalidProperty('to is the URL given as from: nothing would move');
    return this.transitions.moveUrl({ partnerId, from, to, limit: URL_MOVE_LIMIT }, actor);
  }
}
