/**
 * A suite of random histories over the statement world (statement-world.ts): its scratch database,
 * two partners' companies, the service's configuration for short histories, and a fresh World per
 * history; a record settlement could not write fails the history.
 */
import { Logger } from '@nestjs/common';
import { AppConfig, loadConfig } from '../../src/platform/config/app-config.js';
import type { Metrics } from '../../src/operations/metrics.js';
import { metricsOn } from './metrics.js';
import { scratchDatabase, ScratchDatabase, seedCompany } from './scratch-database.js';
import { ADMIN_TOKEN, TEST_REDIS_URL } from './run-identity.js';
import {
  PROBE_LAST,
  READY_WINDOW,
  SCHEDULE,
  settlementFaults,
  TIMEOUT_MS,
  WINDOW_MAX,
  World,
} from './statement-world.js';

/** The service's configuration for these histories: short timeouts and schedules, small windows. */
export function statementConfig(s: ScratchDatabase): AppConfig {
  return {
    ...loadConfig({ DATABASE_URL: s.databaseUrl, REDIS_URL: TEST_REDIS_URL, ADMIN_TOKEN }),
    callbackTimeoutMs: TIMEOUT_MS,
    callbackRetryScheduleMs: SCHEDULE,
    callbackReadyWindow: READY_WINDOW,
    callbackDestinationConcurrency: WINDOW_MAX,
    callbackBreakerThreshold: 3,
    callbackBreakerProbeMs: { first: 1000, last: PROBE_LAST },
  };
}

/** What a suite of histories runs on: a scratch database with two partners' companies, the configuration and metrics. */
export interface StatementSuite {
  readonly s: ScratchDatabase;
  readonly config: AppConfig;
  readonly metrics: Metrics;
  readonly companies: { partnerId: string; companyId: string }[];
  /** A new history: every delivery table emptied, a World on it with its workers announced. */
  world(destinations: number, workerSlots: number[]): Promise<World>;
}

/** The suite's set-up, in its beforeAll (closed in its afterAll); read its parts once beforeAll has run. */
export function statementSuite(): StatementSuite {
  let parts: Omit<StatementSuite, 'world'> | undefined;
  beforeAll(async () => {
    for (const level of ['warn', 'error'] as const) {
      // eslint-disable-next-line @typescript-eslint/unbound-method -- called below with the logger as `this`
      const original = Logger.prototype[level];
      jest.spyOn(Logger.prototype, level).mockImplementation(function (
        this: Logger,
        message: unknown,
        ...rest: unknown[]
      ) {
        if (/record/.test(String(message))) settlementFaults.push(String(message));
        return original.call(this, message, ...rest);
      });
    }
    const s = await scratchDatabase();
    parts = {
      s,
      config: statementConfig(s),
      metrics: metricsOn(s.db, s.sql),
      companies: await twoPartnersCompanies(s),
    };
  }, 60_000);
  afterAll(async () => {
    jest.restoreAllMocks();
    await parts?.s.close();
  });
  const got = () => {
    if (!parts) throw new Error('the statement suite is read before its beforeAll ran');
    return parts;
  };
  return {
    get s() {
      return got().s;
    },
    get config() {
      return got().config;
    },
    get metrics() {
      return got().metrics;
    },
    get companies() {
      return got().companies;
    },
    async world(destinations: number, workerSlots: number[]): Promise<World> {
      const { s, config, metrics, companies } = got();
      await s.pool.query(
        `TRUNCATE callback_attempts, callbacks, destinations, delivery_workers, operational_events, failure_notices`,
      );
      const w = new World(s, config, metrics, companies, destinations, workerSlots);
      await w.announce();
      return w;
    },
  };
}

/**
 * Companies 0 and 2 of one partner, company 1 of another: two partners' destinations at every
 * origin (each its own window and circuit), and two companies sharing one destination.
 */
async function twoPartnersCompanies(s: ScratchDatabase): Promise<{ partnerId: string; companyId: string }[]> {
  const [first, second] = [await seedCompany(s.pool), await seedCompany(s.pool)];
  const { rows } = await s.pool.query<{ id: string }>(
    `INSERT INTO companies (partner_id, name, currency, credit_status) VALUES ($1, 'C2', 'EUR', 'active') RETURNING id`,
    [first.partnerId],
  );
  return [first, second, { partnerId: first.partnerId, companyId: rows[0].id }];
}
