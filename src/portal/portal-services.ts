import { Injectable } from '@nestjs/common';
import { BulkReplay, CallbackReads, OperationalEvents, partnerActivity, PartnerActivity, Redelivery } from '../callbacks/index.js';
import { CompaniesService } from '../funding/index.js';
import { SqlPool } from '../platform/index.js';
import { DestinationsService, TestCallbacks } from '../delivery/index.js';
import { PartnerProfile, PortalLinks, PortalSessions } from '../partners/index.js';

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
