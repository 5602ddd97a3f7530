import { Injectable } from '@nestjs/common';
import { invalidProperty, notFound, type SignatureScheme } from '../platform/index.js';
import { DirectoryRow, PartnerRepository } from './partner.repository.js';

/**
 * A partner as operators look it up (GET /admin/v1/partners): who it is and how it is set up,
 * never a secret, key, key hash or token. Its destinations are the callback store's: the
 * operators' view adds them above this module (callbacks/partner-lookup).
 */
export interface PartnerRecord {
  id: string;
  name: string;
  createdAt: string;
  signatureScheme: SignatureScheme;
  operationsUrl: string | null;
  apiKeyRotatedAt: string | null;
  clientCertificate: { subject: string; notAfter: string } | null;
}

export interface PartnerPageQuery {
  /** A case-insensitive part of the name, taken literally (`%` and `_` are characters). */
  name?: string;
  limit: number;
  cursor?: string;
}

type Row = DirectoryRow;

/** `name` as an ILIKE pattern matching it anywhere, its own `%`, `_` and `\` taken literally. */
export const containsPattern = (part: string): string => `%${part.replace(/[\\%_]/g, '\\$&')}%`;

/**
 * A cursor: the last row's created_at in microseconds and its id, 24 bytes in base64url (32
 * characters, within every list's 64), behind a tag byte naming this list.
 */
const TAG = 0x70;
/** 10000-01-01: a time past it has no four-digit year, and no partner was created then. */
const YEAR_10000_US = 253_402_300_800_000_000n;
const encodeCursor = (r: Row): string => {
  const buf = Buffer.alloc(25);
  buf[0] = TAG;
  buf.writeBigInt64BE(BigInt(r.created_us), 1);
  Buffer.from(r.id.replace(/-/g, ''), 'hex').copy(buf, 9);
  return buf.toString('base64url');
};

/**
 * The position a cursor holds (created_at as ISO-8601 with microseconds), or a 400 naming
 * `cursor` for anything this list did not hand out.
 */
export function decodePartnerCursor(cursor: string): { createdAt: string; id: string } {
  const buf = Buffer.from(cursor, 'base64url');
  const us = buf.length === 25 && buf[0] === TAG ? buf.readBigInt64BE(1) : -1n;
  if (us < 0n || us >= YEAR_10000_US || buf.toString('base64url') !== cursor) {
    throw invalidProperty('cursor is not a cursor returned by this endpoint');
  }
  const ms = new Date(Number(us / 1000n)).toISOString();
  const hex = buf.subarray(9).toString('hex');
  return {
    createdAt: `${ms.slice(0, -1)}${String(us % 1000n).padStart(3, '0')}Z`,
    id: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`,
  };
}

const record = (r: Row): PartnerRecord => ({
  id: r.id,
  name: r.name,
  createdAt: r.created_at.toISOString(),
  signatureScheme: r.signature_scheme,
  operationsUrl: r.operations_url,
  apiKeyRotatedAt: r.api_key_rotated_at?.toISOString() ?? null,
  clientCertificate: r.not_after === null ? null : { subject: r.subject!, notAfter: r.not_after.toISOString() },
});

/** The operators' read of partner accounts: one by id, or a page by name. */
@Injectable()
export class PartnerDirectory {
  constructor(private readonly partners: PartnerRepository) {}

  /** Whether a partner of this id exists. */
  exists(id: string): Promise<boolean> {
    return this.partners.exists(id);
  }

  async find(id: string): Promise<PartnerRecord> {
    const row = await this.partners.find(id);
    if (!row) throw notFound('Partner');
    return record(row);
  }

  async page(q: PartnerPageQuery): Promise<{ items: PartnerRecord[]; nextCursor: string | null }> {
    const after = q.cursor === undefined ? null : decodePartnerCursor(q.cursor);
    const rows = await this.partners.page(q.name === undefined ? null : containsPattern(q.name), after, q.limit + 1);
    const page = rows.slice(0, q.limit);
    return { items: page.map(record), nextCursor: rows.length > q.limit ? encodeCursor(page[page.length - 1]) : null };
  }
}
