import type { ApiOperationOptions } from '@nestjs/swagger';
import { variantOnly } from '../platform/index.js';
import { CallbackMessage } from './callback-message.js';
import { CallbackBody } from './callback.responses.js';
import { catalogueEntry, readNextText } from './event-catalogue.js';

/** Where a callback is sent: the request body property holding its URL, and its messages. */
export interface CallbackTarget {
  /** The request body property whose URL receives these callbacks. */
  property: string;
  /** Which messages go there (their descriptions and examples come from the event catalogue). */
  messages: CallbackMessage[];
  /** Only in this API variant (the organization's URL property is named per variant). */
  variant?: 'A' | 'B';
}

/** An example body of a signed POST, as OpenAPI `examples` name one. */
export interface BodyExample {
  summary: string;
  value: object;
}

/** What a signed POST carries: its summary, what its body is, the body's schema and its examples. */
export interface SignedPostDoc {
  summary: string;
  /** The body and what the receiver does with it, after the signing and retry rules every signed POST shares. */
  body: string;
  schema: string;
  /** Example bodies by name (the event catalogue's). */
  examples: Record<string, BodyExample>;
}

/**
 * A signed POST of this service, as OpenAPI `callbacks` describe it: what a partner's receiver
 * gets (docs/partners.md, "The request"), signed and retried alike for callbacks and operational
 * events, and which of its answers count as success.
 */
export function signedPost(doc: SignedPostDoc) {
  const header = (name: string, description: string, schema: object) => ({
    name,
    in: 'header',
    required: true,
    description,
    schema,
  });
  return {
    post: {
      summary: doc.summary,
      description:
        'Signed per Standard Webhooks; verify v1 with the `standardwebhooks` package and the partner signing secret ' +
        '(v1a: Ed25519, see webhook-signature), and de-duplicate on webhook-id ' +
        '(delivery is at least once, with no ordering between them). Content-Type is ' +
        `\`application/json\`; ${doc.body} Retries after a failure: 5s, 5m, 30m, 2h, 5h, 10h, 10h ` +
        '(CALLBACK_RETRY_SCHEDULE, ±20 % jitter), at least Retry-After on 429/503; then it is failed.',
      parameters: [
        header('webhook-id', 'its id: the same on every retry and redelivery', { type: 'string', format: 'uuid' }),
        header('webhook-timestamp', 'Unix seconds of this attempt', { type: 'string', pattern: '^[0-9]+$' }),
        header(
          'webhook-signature',
          'hmac-sha256 partners: v1,<base64 HMAC-SHA256(secret, "{id}.{timestamp}.{body}")>; ' +
            'ed25519 partners: v1a,<base64 Ed25519 signature of the same content>, ' +
            'verifiable with the whpk_ public key (GET /v1/partner lists it). ' +
            'For 24 h after a rotation or a switch of scheme, ' +
            'two, space-separated (v1 and/or v1a): verify with either key',
          { type: 'string', pattern: '^v1a?,[A-Za-z0-9+/]+={0,2}( v1a?,[A-Za-z0-9+/]+={0,2})*$' },
        ),
        header('user-agent', 'funding-service-callbacks/<service version>', {
          type: 'string',
          pattern: '^funding-service-callbacks/',
        }),
      ],
      requestBody: {
        required: true,
        content: {
          'application/json': { schema: { $ref: `#/components/schemas/${doc.schema}` }, examples: doc.examples },
        },
      },
      responses: {
        '2XX': {
          description:
            'success: any 2xx within CALLBACK_TIMEOUT_MS (default 15 s); ' +
            'the body is read up to 1 KiB for the attempt log',
        },
        '410': { description: 'Gone: no more retries; it is failed at once' },
        default: {
          description:
            'failure, retried by the schedule: any other status (a 3xx too: redirects are not followed), ' +
            'a timeout or a network error; ' +
            'Retry-After is honoured on 429 and 503 (capped at 24 h)',
        },
      },
    },
  };
}

/** The callback POST to a registered URL: its messages, when each is sent and what to read next, from the catalogue. */
function callbackOperation(target: CallbackTarget) {
  const entries = target.messages.map(catalogueEntry);
  const each = entries.map((e) => `${e.name} (${e.code}) when ${e.when}: read ${readNextText(e, target.variant)}`);
  return signedPost({
    summary: `POST to the URL in ${target.property}: ${entries.map((e) => `${e.name} (${e.code})`).join(', ')}`,
    body:
      `the body is exactly the five keys of CallbackBody, in that order. ${each.join('; ')}. ` +
      'A callback says "read the ' +
      'current state" through these follow-up endpoints; a failed one is redeliverable.',
    schema: CallbackBody.name,
    examples: Object.fromEntries(entries.map((e) => [e.name, { summary: `${e.code}: ${e.when}`, value: e.example }])),
  });
}

/**
 * The OpenAPI `callbacks` of an operation registering callback URLs (`@Doc(..., { callbacks })`):
 * for each target, the POST its URL receives.
 */
export function callbackDocs(targets: CallbackTarget[]): ApiOperationOptions['callbacks'] {
  const objects = Object.fromEntries(
    targets.map((c) => [
      c.property,
      { ...(c.variant ? variantOnly(c.variant) : {}), [`{$request.body#/${c.property}}`]: callbackOperation(c) },
    ]),
  );
  // The variant mark is an extension key, which the callback object allows but its type does not know.
  return objects as ApiOperationOptions['callbacks'];
}
