import { Injectable } from '@nestjs/common';
import { SqlPool } from '../platform/index.js';
import { lastErrorTimes, partnerActivity, PartnerActivity } from './store/portal-activity.js';

/**
 * A partner's last 24 hours of deliveries, for its portal's overview: attempts per hour, its
 * callbacks now delivered or failed, and when each destination's last error happened.
 */
@Injectable()
export class PartnerActivityReads {
  constructor(private readonly sql: SqlPool) {}

  lastDay(partnerId: string): Promise<PartnerActivity> {
    return partnerActivity(this.sql, partnerId);
  }

  /** Each destination's (by origin) last error's time, when within the last 24 hours. */
  lastErrorTimes(partnerId: string): Promise<Map<string, Date>> {
    return lastErrorTimes(this.sql, partnerId);
  }
}
