import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, AppConfig, createRedis, FAIL_FAST, RedisConnection, redisNamespace } from '../platform/index.js';

/** Requests per second a partner may make (across all API processes: the count lives in Redis). */
export const PARTNER_RATE_LIMIT = Symbol('PARTNER_RATE_LIMIT');
export const DEFAULT_PARTNER_RATE_LIMIT = 100;

/** How long a refused request waits for the next one-second window: the Retry-After of a 429. */
export const RATE_WINDOW_S = 1;

/**
 * A fixed one-second window per partner in Redis. When Redis cannot answer within 200 ms the
 * request goes through: the API keeps working (and recording callbacks) during a Redis outage.
 * The partner portal counts apart, at the same limit: a partner's portal sessions together, and
 * requests without a session (its sign-in pages, the 401 page) per client address.
 */
@Injectable()
export class RateLimiter implements OnModuleDestroy {
  private readonly redis: RedisConnection;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(PARTNER_RATE_LIMIT) private readonly perSecond: number,
  ) {
    this.redis = createRedis(config.redisUrl, `${config.queuePrefix}-ratelimit`, FAIL_FAST);
  }

  /** Whether this API request of the partner is within the limit (it is counted). */
  withinLimit(partnerId: string): Promise<boolean> {
    return this.within(partnerId);
  }

  /** Whether this portal request in one of the partner's sessions is within the limit (it is counted). */
  portalWithinLimit(partnerId: string): Promise<boolean> {
    return this.within(`portal:${partnerId}`);
  }

  /** Whether this portal request without a session, from this client address, is within the limit. */
  visitorWithinLimit(address: string): Promise<boolean> {
    return this.within(`portal-visitor:${address}`);
  }

  private async within(bucket: string): Promise<boolean> {
    const second = Math.floor(Date.now() / 1000);
    const key = `${redisNamespace(this.config.queuePrefix)}:ratelimit:${bucket}:${second}`;
    const count = await Promise.race([
      this.redis
        .multi()
        .incr(key)
        .expire(key, 2)
        .exec()
        .then((r) => Number(r?.[0]?.[1] ?? 0))
        .catch(() => 0),
      new Promise<number>((resolve) => setTimeout(() => resolve(0), 200).unref()),
    ]);
    return count <= this.perSecond;
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }
}
