import { Injectable } from '@nestjs/common';
import { callbackOrigin, CircuitState, DestinationCircuits, UrlDeliveries } from '../../callbacks/index.js';
import { CallbackUrlRepository } from './callback-url.repository.js';

/** The list's bound: a partner usually has a handful of URLs; one per resource would be 100,000s. */
export const CALLBACK_URL_LIST_LIMIT = 1000;

export interface CallbackUrlView {
  url: string;
  resources: number;
  destination: { origin: string; state: CircuitState };
  lastDeliveredAt: string | null;
}

/**
 * A partner's callback URLs in use (GET /v1/callback-urls, the portal's URLs page): the URLs are
 * this module's (its resources' properties); each one's destination state is the delivery
 * module's (DestinationCircuits) and its last delivery the callback store's.
 */
@Injectable()
export class CallbackUrlList {
  constructor(
    private readonly urls: CallbackUrlRepository,
    private readonly circuits: DestinationCircuits,
    private readonly deliveries: UrlDeliveries,
  ) {}

  async list(partnerId: string): Promise<CallbackUrlView[]> {
    const uses = await this.urls.inUse(partnerId, CALLBACK_URL_LIST_LIMIT);
    const urls = uses.map((u) => u.url);
    const [states, delivered] = await Promise.all([
      this.circuits.statesOf(partnerId, [...new Set(urls.map(callbackOrigin))]),
      this.deliveries.lastDeliveries(partnerId, urls),
    ]);
    return uses.map(({ url, resources }) => {
      const origin = callbackOrigin(url);
      const lastDeliveredAt = delivered.get(url)?.toISOString() ?? null;
      return { url, resources, destination: { origin, state: states.get(origin)! }, lastDeliveredAt };
    });
  }
}
