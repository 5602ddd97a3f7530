import { INestApplication, Type } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { AppConfig } from '../config/app-config.js';
import { VARIANTS } from '../config/variant.js';
import { securitySchemes } from './api-doc.js';
import { keepVariant } from './api-variant-doc.js';
import { ErrorResponse } from '../http/error-response.js';
import { partnersFirst } from './partner-document.js';

/**
 * The OpenAPI document served at /docs-json: what this deployment answers, for its API variant
 * only. OpenAPI 3.1, so that a nullable reference (`lastPayment`) is a plain `anyOf` with
 * `null` that validators and generators read alike (3.0's `nullable` beside `allOf` is not).
 */
/**
 * What the controllers do not declare: schemas only referenced by name, and routes mounted outside
 * Nest (the dashboard).
 */
export interface DocumentParts {
  models: Type<unknown>[];
  paths: OpenAPIObject['paths'];
}

export function buildApiDocument(app: INestApplication, config: AppConfig, parts: DocumentParts): OpenAPIObject {
  const names = VARIANTS[config.variant];
  const builder = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('Funding service')
    .setDescription(
      'Partner API (/v1), operator API (/admin/v1) and signed callbacks. ' +
        `This deployment runs API variant ${config.variant}: ` +
        `organization callback property "${names.companyCallbackProperty}", ` +
        `withdrawal collection "${names.withdrawalsSegment}"` +
        `${names.hasTerms ? ', credit terms endpoint' : ''}. ` +
        'The callbacks a partner receives are described as OpenAPI callbacks on ' +
        'the operations that register their URLs. ' +
        'Errors share one shape (ErrorResponse); money is a decimal string, ids are UUIDs. ' +
        'Integrating as a partner (verifying signatures, de-duplicating on webhook-id, retries, redelivery): ' +
        "the partner guide at /docs/partners (docs/partners.md), and the partners' routes alone at /docs/partners/api.",
    )
    .setVersion(config.version)
    // The service is deployed at addresses this document cannot know: its paths are relative to
    // the address that served it.
    .addServer('/', 'the address serving this document');
  for (const [name, scheme] of Object.entries(securitySchemes)) builder.addSecurity(name, { ...scheme });
  const document = SwaggerModule.createDocument(app, builder.build(), {
    extraModels: [ErrorResponse, ...parts.models],
  });
  Object.assign(document.paths, parts.paths);
  // package.json's UNLICENSED, as an SPDX expression: no licence is granted.
  // (OpenAPI 3.1's `identifier`, which the 3.0 types of @nestjs/swagger do not know.)
  document.info.license = {
    name: 'Proprietary (UNLICENSED)',
    identifier: 'LicenseRef-Proprietary',
  } as OpenAPIObject['info']['license'];
  markPublicOperations(document);
  return partnersFirst(keepVariant(document, config.variant));
}

const ERROR_REF = `#/components/schemas/${ErrorResponse.name}`;

/**
 * Errors are JSON in the one shape on every operation, also where the success is not JSON (Nest's
 * `@ApiProduces` gives every response of /metrics its text/plain).
 */
function errorsAsJson(op: { responses?: Record<string, { content?: Record<string, unknown> }> }): void {
  for (const response of Object.values(op.responses ?? {})) {
    const content = response.content ?? {};
    const error = Object.values(content).find((c) => (c as { schema?: { $ref?: string } }).schema?.$ref === ERROR_REF);
    if (error) response.content = { 'application/json': error };
  }
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * `security: []` on every operation that takes no credentials, so that no reader (or linter) takes
 * a missing requirement for a forgotten one: the operations endpoints, the source addresses, and
 * the callbacks this service sends (authenticated by their signature headers, not a credential).
 */
function markPublicOperations(document: OpenAPIObject): void {
  const visit = (item: Record<string, unknown>) => {
    for (const method of METHODS) {
      const op = item[method] as
        { security?: unknown[]; callbacks?: Record<string, Record<string, Record<string, unknown>>> } | undefined;
      if (!op) continue;
      op.security ??= [];
      errorsAsJson(op as { responses?: Record<string, { content?: Record<string, unknown> }> });
      for (const callback of Object.values(op.callbacks ?? {})) {
        for (const [expression, callbackItem] of Object.entries(callback))
          if (expression.startsWith('{')) visit(callbackItem);
      }
    }
  };
  for (const item of Object.values(document.paths)) visit(item as Record<string, unknown>);
}
