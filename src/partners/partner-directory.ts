import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { invalidProperty, notFound, type SignatureScheme } from '../platform/index.js';

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

interface Row {
  id: string;
  name: string;
  created_at: Date;
  /** created_at in microseconds since 1970, as the cursor holds it. */
  created_us: string;
  signature_scheme: SignatureScheme;
  operations_url: string | null;
  api_key_rotated_at: Date | null;
  subject: string | null;
  not_after: Date | null;
}

const COLUMNS = `p.id, p.name, p.created_at, (extract(epoch FROM p.created_at) * 1000000)::bigint::text AS created_us,
  p.signature_scheme, p.operations_url, p.api_key_rotated_at, cc.subject, cc.not_after
  FROM partners p LEFT JOIN partner_client_certificates cc ON cc.partner_id = p.id`;

/** One partner by id. */
export const FIND_PARTNER = `SELECT ${COLUMNS} WHERE p.id = $1`;

/**
 * A page of partners, newest first: `partners_created_idx` read backwards from the cursor
 * ($2, $3: the last row's created_at and id) and stopped at $4 rows; with a name ($1, an ILIKE
 * pattern), `partners_name_trgm_idx` finds the matches when the part has trigrams (the planner
 * chooses by how many match). Each row's certificate by its unique key.
 */
export const PARTNER_PAGE = `SELECT ${COLUMNS}
   WHERE ($1::text IS NULL OR p.name ILIKE $1)
     AND ($2::timestamptz IS NULL OR (p.created_at, p.id) < ($2::timestamptz, $3::uuid))
   ORDER BY p.created_at DESC, p.id DESC
   LIMIT $4`;

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
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Whether a partner of this id exists. */
  async exists(id: string): Promise<boolean> {
    const known: unknown[] = await this.db.query(`SELECT 1 FROM partners WHERE id = $1`, [id]);
    return known.length > 0;
  }

  async find(id: string): Promise<PartnerRecord> {
    const [row]: Row[] = await this.db.query(FIND_PARTNER, [id]);
    if (!row) throw notFound('Partner');
    return record(row);
  }

  async page(q: PartnerPageQuery): Promise<{ items: PartnerRecord[]; nextCursor: string | null }> {
    const after = q.cursor === undefined ? null : decodePartnerCursor(q.cursor);
    const rows: Row[] = await this.db.query(PARTNER_PAGE, [
      q.name === undefined ? null : containsPattern(q.name),
      after?.createdAt ?? null,
      after?.id ?? null,
      q.limit + 1,
    ]);
    const page = rows.slice(0, q.limit);
    return { items: page.map(record), nextCursor: rows.length > q.limit ? encodeCursor(page[page.length - 1]) : null };
  }
}
