import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { AppConfig } from '../config/app-config.js';
import { VARIANTS } from '../config/variant.js';
import { DASHBOARD_PATH } from '../delivery/queue-dashboard.js';
import { SECURITY, securitySchemes } from './api-doc.js';
import { keepVariant } from './api-variant-doc.js';
import { CallbackBody, ErrorResponse } from './responses.js';

/**
 * The OpenAPI document served at /docs-json: what this deployment answers, for its API variant
 * only. OpenAPI 3.1, so that a nullable reference (`lastPayment`) is a plain `anyOf` with
 * `null` that validators and generators read alike (3.0's `nullable` beside `allOf` is not).
 */
export function buildApiDocument(app: INestApplication, config: AppConfig): OpenAPIObject {
  const names = VARIANTS[config.variant];
  const builder = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('Funding service')
    .setDescription(
      `Partner API (/v1), operator API (/admin/v1) and signed callbacks. This deployment runs API variant ${config.variant}: ` +
        `organization callback property "${names.companyCallbackProperty}", withdrawal collection "${names.withdrawalsSegment}"` +
        `${names.hasTerms ? ', credit terms endpoint' : ''}. The callbacks a partner receives are described as OpenAPI callbacks on ` +
        'the operations that register their URLs. Errors share one shape (ErrorResponse); money is a decimal string, ids are UUIDs. ' +
        'Integrating as a partner (verifying signatures, de-duplicating on webhook-id, retries, redelivery): `docs/partners.md` in the ' +
        "service's source repository.",
    )
    .setVersion(config.version);
  for (const [name, scheme] of Object.entries(securitySchemes)) builder.addSecurity(name, { ...scheme });
  const document = SwaggerModule.createDocument(app, builder.build(), { extraModels: [CallbackBody, ErrorResponse] });
  if (config.role !== 'worker') document.paths[DASHBOARD_PATH] = dashboardPath();
  return keepVariant(document, config.variant);
}

/** The queue dashboard (bull-board, mounted outside Nest's controllers): its page and credentials. */
function dashboardPath(): OpenAPIObject['paths'][string] {
  return {
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
  };
}
