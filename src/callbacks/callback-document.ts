import type { ApiOperationOptions } from '@nestjs/swagger';
import { variantOnly } from '../openapi/api-variant-doc.js';
import { CallbackBody } from './callback.responses.js';

/** Where a callback is sent: the request body property holding its URL, and its messages. */
export interface CallbackTarget {
  /** The request body property whose URL receives these callbacks. */
  property: string;
  /** Which messages go there, in words (docs/partners.md, "Registering callback URLs"). */
  messages: string;
  /** Only in this API variant (the organization's URL property is named per variant). */
  variant?: 'A' | 'B';
}

/**
 * The callback POST, as OpenAPI `callbacks` on an operation registering a URL: what a partner's
 * receiver gets (docs/partners.md, "The request") and which of its answers count as success.
 */
function callbackOperation(target: CallbackTarget) {
  const header = (name: string, description: string, schema: object) => ({ name, in: 'header', required: true, description, schema });
  return {
    post: {
      summary: `POST to the URL in ${target.property}: ${target.messages}`,
      description:
        'Signed per Standard Webhooks; verify v1 with the `standardwebhooks` package and the partner signing secret (v1a: Ed25519, see ' +
          'webhook-signature), and ' +
        'de-duplicate on webhook-id (delivery is at least once, with no ordering between callbacks). Content-Type is ' +
        '`application/json`; the body is exactly the five keys of CallbackBody, in that order. A callback says "read ' +
        'the current state" through the follow-up endpoints. Retries after a failure: 5s, 5m, 30m, 2h, 5h, 10h, 10h ' +
        '(CALLBACK_RETRY_SCHEDULE, ±20 % jitter), at least Retry-After on 429/503; then the callback is failed and redeliverable.',
      parameters: [
        header('webhook-id', 'the callback id: the same on every retry and redelivery', { type: 'string', format: 'uuid' }),
        header('webhook-timestamp', 'Unix seconds of this attempt', { type: 'string', pattern: '^[0-9]+$' }),
        header(
          'webhook-signature',
          'hmac-sha256 partners: v1,<base64 HMAC-SHA256(secret, "{id}.{timestamp}.{body}")>; ed25519 partners: v1a,<base64 Ed25519 signature of ' +
            'the same content>, verifiable with the whpk_ public key (GET /v1/partner lists it). For 24 h after a rotation or a switch of scheme, ' +
            'two, space-separated (v1 and/or v1a): verify with either key',
          { type: 'string', pattern: '^v1a?,[A-Za-z0-9+/]+={0,2}( v1a?,[A-Za-z0-9+/]+={0,2})*$' },
        ),
        header('user-agent', 'funding-service-callbacks/<service version>', { type: 'string', pattern: '^funding-service-callbacks/' }),
      ],
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${CallbackBody.name}` } } } },
      responses: {
        '2XX': { description: `success: any 2xx within CALLBACK_TIMEOUT_MS (default 15 s); the body is read up to 1 KiB for the attempt log` },
        '410': { description: 'Gone: no more retries; the callback is failed at once' },
        default: {
          description:
            'failure, retried by the schedule: any other status (a 3xx too: redirects are not followed), a timeout or a network error; ' +
            'Retry-After is honoured on 429 and 503 (capped at 24 h)',
        },
      },
    },
  };
}

/**
 * The OpenAPI `callbacks` of an operation registering callback URLs (`@Doc(..., { callbacks })`):
 * for each target, the POST its URL receives.
 */
export function callbackDocs(targets: CallbackTarget[]): ApiOperationOptions['callbacks'] {
  const objects = Object.fromEntries(
    targets.map((c) => [c.property, { ...(c.variant ? variantOnly(c.variant) : {}), [`{$request.body#/${c.property}}`]: callbackOperation(c) }]),
  );
  // The variant mark is an extension key, which the callback object allows but its type does not know.
  return objects as ApiOperationOptions['callbacks'];
}
