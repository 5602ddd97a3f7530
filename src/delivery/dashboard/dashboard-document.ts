import type { OpenAPIObject } from '@nestjs/swagger';
import { ErrorResponse, SECURITY } from '../../platform/index.js';
import { DASHBOARD_PATH } from './queue-dashboard.js';

/** The queue dashboard (bull-board, mounted outside Nest's controllers): its page and credentials. */
export function dashboardDocument(): OpenAPIObject['paths'] {
  return {
    [DASHBOARD_PATH]: {
      get: {
        tags: ['operations'],
        summary: 'Queue dashboard (bull-board): an HTML page; its own assets and API live under this path',
        operationId: 'queueDashboard',
        security: [{ [SECURITY.operator]: [] as string[] }, { [SECURITY.operatorBasic]: [] as string[] }],
        responses: {
          '200': { description: 'the dashboard page', content: { 'text/html': { schema: { type: 'string' } } } },
          '401': {
            description: 'missing or invalid operator credentials; a browser is asked for Basic',
            headers: { 'WWW-Authenticate': { required: true, schema: { type: 'string', pattern: '^Basic ' } } },
            content: { 'application/json': { schema: { $ref: `#/components/schemas/${ErrorResponse.name}` } } },
          },
        },
      },
    },
  };
}
