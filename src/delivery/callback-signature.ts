import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks signature: `v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>` where
 * key is the base64 payload of `whsec_…`. Several secrets (a rotation) give a space-separated list.
 */
export function signatureHeader(secrets: string[], msgId: string, timestampSec: number, body: string): string {
  const content = `${msgId}.${timestampSec}.${body}`;
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
      return `v1,${createHmac('sha256', key).update(content).digest('base64')}`;
    })
    .join(' ');
}
