import { Injectable } from '@nestjs/common';
import { BulkReplay } from '../callbacks/bulk-replay.js';
import { CallbackReads } from '../callbacks/callback-reads.js';
import { Redelivery } from '../callbacks/redelivery.js';
import { partnerActivity, PartnerActivity } from '../callbacks/store/portal-activity.js';
import { CompaniesService } from '../companies/companies.service.js';
import { SqlPool } from '../database/sql-pool.js';
import { DestinationsService } from '../destinations/destinations.service.js';
import { OperationalEvents } from '../operational-events/operational-events.service.js';
import { PartnerProfile } from '../partners/partner-profile.js';
import { PortalLinks } from '../partners/portal-links.js';
import { PortalSessions } from '../partners/portal-sessions.js';
import { TestCallbacks } from '../test-callbacks/test-callbacks.service.js';

/**
 * What the portal's pages call: the services the partner API calls, scoped to the session's
 * partner exactly as the API scopes them to the API key's (another partner's id: not found).
 * The portal decides nothing itself.
 */
@Injectable()
export class PortalServices {
  constructor(
    readonly links: PortalLinks,
    readonly sessions: PortalSessions,
    readonly callbacks: CallbackReads,
    readonly redelivery: Redelivery,
    readonly tests: TestCallbacks,
    readonly profile: PartnerProfile,
    readonly events: OperationalEvents,
    readonly destinations: DestinationsService,
    readonly replay: BulkReplay,
    readonly companies: CompaniesService,
    private readonly sql: SqlPool,
  ) {}

  /** The partner's last 24 hours of attempts (the overview's chart and counts). */
  activity(partnerId: string): Promise<PartnerActivity> {
    return partnerActivity(this.sql, partnerId);
  }
}
