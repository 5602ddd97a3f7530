import { Access } from '../operators/index.js';
import { APP_CONFIG, AppConfig, NoQuery, pingNamespace, REDIS, RedisConnection } from '../platform/index.js';
import { Controller, Get, Inject, ServiceUnavailableException } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { HealthResponse, ReadinessResponse } from './health.responses.js';
import { HealthRepository } from './health.repository.js';

@ApiTags('operations')
@Access.anyone()
@Controller()
export class HealthController {
  constructor(
    private readonly database: HealthRepository,
    @Inject(REDIS) private readonly redis: RedisConnection,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The process is alive. */
  @ApiOperation({ summary: 'The process is alive (no authentication)' })
  @ApiResponse({ status: 200, type: HealthResponse, description: 'alive' })
  @NoQuery()
  @Get('health')
  health() {
    return { status: 'ok' };
  }

  /** PostgreSQL and Redis answer. */
  @ApiOperation({ summary: 'PostgreSQL and Redis are reachable (no authentication)' })
  @ApiResponse({ status: 200, type: ReadinessResponse, description: 'ready' })
  @ApiResponse({ status: 503, type: ReadinessResponse, description: 'PostgreSQL or Redis does not answer within 2 s' })
  @NoQuery()
  @Get('ready')
  async ready() {
    const timeout = <T>(p: Promise<T>) =>
      Promise.race([
        p,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000).unref()),
      ]);
    const [database, redis] = await Promise.all([
      timeout(this.database.ping()).then(
        () => 'ok',
        () => 'unreachable',
      ),
      timeout(pingNamespace(this.redis, this.config.queuePrefix)).then(
        () => 'ok',
        () => 'unreachable',
      ),
    ]);
    const body = { status: database === 'ok' && redis === 'ok' ? 'ok' : 'unavailable', database, redis };
    if (body.status !== 'ok') throw new ServiceUnavailableException(body);
    return body;
  }
}
