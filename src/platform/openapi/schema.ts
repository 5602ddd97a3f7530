import { variantOnly } from './api-variant-doc.js';

// Building blocks of the response schemas, shared by each module's own (*.responses.ts): the
// views (*.views.ts) build the bodies; the end-to-end tests validate every response against them.

export const uuid = { type: 'string', format: 'uuid' } as const;
export const nullableUuid = { type: 'string', format: 'uuid', nullable: true } as const;
export const timestamp = { type: 'string', format: 'date-time', description: 'ISO-8601, UTC' } as const;
export const nullableTimestamp = { ...timestamp, nullable: true } as const;
/**
 * A callback URL property (docs/partners.md, "Registering callback URLs"): absolute https (http only
 * where allowed), no user-info, a public address.
 */
export const CALLBACK_URL = { type: 'string', format: 'uri', maxLength: 2048 } as const;
/**
 * Money in responses: a decimal string with exactly 2 decimals, never a JSON number
 * (docs/partners.md, "Credentials and conventions").
 */
export const money = (example: string) =>
  ({ type: 'string', pattern: '^\\d+\\.\\d{2}$', example, description: 'decimal string, exactly 2 decimals' }) as const;
export const currency = { type: 'string', pattern: '^[A-Z]{3}$', example: 'EUR', description: 'ISO 4217' } as const;
export const url = (description: string) => ({ type: 'string', format: 'uri', nullable: true, description }) as const;
export { variantOnly };
