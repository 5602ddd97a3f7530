import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Pool } from 'pg';
import { APP_CONFIG, AppConfig } from '../config/app-config.js';
import { RepeatLimitedLog } from '../logging/repeat-limited-log.js';
import { PLANNER_SETTINGS, SQL_POOL_MAX } from './database.js';

/**
 * The connections of the SQL the service writes by hand and runs outside the ORM's transactions
 * (a company's one-row changes, a delivery's load, settlement, retention, the feed, the callbacks gauge,
 * the wake-up). Those statements are prepared by name and keep their generic plans, so their
 * connections plan by index whatever the statistics (PLANNER_SETTINGS). The ORM's connections
 * (the data source's pool, which also runs the store's statements inside TransactionRunner.transaction) send
 * no named statement: each of their statements is planned for its values (ORM_PLANNER_SETTINGS).
 */
@Injectable()
export class SqlPool implements OnApplicationShutdown {
  private readonly log = new Logger('SqlPool');
  private readonly errors = new RepeatLimitedLog((m) => this.log.warn(m));
  readonly pool: Pool;

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'databaseUrl'>) {
    this.pool = new Pool({ connectionString: config.databaseUrl, max: SQL_POOL_MAX, options: PLANNER_SETTINGS });
    // An idle connection PostgreSQL ended (a restart): the pool drops it and connects anew when asked.
    this.pool.on('error', (e) => this.errors.warn(`an idle connection was closed: ${e.message}`));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}
