import { Get } from '@nestjs/common';
import { PartnerActivityReads } from '../callbacks/index.js';
import { DestinationsService } from '../delivery/index.js';
import type { PortalIdentity } from '../operators/index.js';
import { chartOf } from './portal-format.js';
import { Page, PortalController, Session } from './portal-page.js';

/**
 * The overview: the partner's destinations (a banner while one is not closed; each one's last error
 * with its time), the last 24 hours' counts, and attempts per hour as a chart (oldest hour left)
 * and as a table (newest hour first) with the same figures.
 */
@PortalController()
export class PortalOverviewController {
  constructor(
    private readonly destinations: DestinationsService,
    private readonly activity: PartnerActivityReads,
  ) {}

  @Get()
  @Page('overview')
  async overview(@Session() s: PortalIdentity) {
    const [destinations, activity, errorTimes] = await Promise.all([
      this.destinations.listForPartner(s.partnerId),
      this.activity.lastDay(s.partnerId),
      this.activity.lastErrorTimes(s.partnerId),
    ]);
    const shown = destinations.map((d) => ({ ...d, lastErrorAt: errorTimes.get(d.origin) ?? null }));
    return {
      title: 'Overview',
      nav: 'overview',
      destinations: shown,
      open: shown.filter((d) => d.state !== 'closed'),
      activity,
      newestFirst: [...activity.hours].reverse(),
      chart: chartOf(activity.hours),
    };
  }
}
