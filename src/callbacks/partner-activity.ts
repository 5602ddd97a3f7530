import { Injectable } from '@nestjs/common';
import { PartnerActivity, PortalActivityRepository } from './store/portal-activity.js';

/**
 * A partner's last 24 hours of deliveries, for its portal's overview: attempts per hour, its
 * callbacks now delivered or failed, and when each destination's last error happened.
 */
@Injectable()
export class PartnerActivityReads {
  constructor(private readonly activity: PortalActivityRepository) {}

  lastDay(partnerId: string): Promise<PartnerActivity> {
    return this.activity.partnerActivity(partnerId);
  }

  /** Each destination's (by origin) last error's time, when within the last 24 hours. */
  lastErrorTimes(partnerId: string): Promise<Map<string, Date>> {
    return this.activity.lastErrorTimes(partnerId);
  }
}
