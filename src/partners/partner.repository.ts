import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { SignatureScheme } from '../platform/index.js';
import { Partner } from './partner.entity.js';

/** A partner as the operators' directory reads it (partner-directory.ts). */
export interface DirectoryRow {
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

/** A partner as it sees itself (partner-profile.ts). */
export interface ProfileRow {
  id: string;
  name: string;
  signature_scheme: SignatureScheme;
  signing_public_key: string | null;
  previous_public_key: string | null;
  operations_url: string | null;
  /** The client certificate's, all null without one. */
  subject: string | null;
  issuer: string | null;
  not_after: Date | null;
  fingerprint256: string | null;
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

/** The previous key is listed while it still signs: by PostgreSQL's clock, as the delivery load decides it. */
const VIEW = `
  SELECT p.id, p.name, p.signature_scheme, p.signing_public_key,
         CASE WHEN p.previous_secret_expires_at > now() THEN p.previous_signing_public_key END AS previous_public_key,
         p.operations_url, cc.subject, cc.issuer, cc.not_after, cc.fingerprint256
    FROM partners p
    LEFT JOIN partner_client_certificates cc ON cc.partner_id = p.id
   WHERE p.id = $1`;

/** The statements of the partners table written by hand, and those TypeORM builds for Partner, one method each. */
@Injectable()
export class PartnerRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Whether a partner of this id exists. */
  async exists(id: string): Promise<boolean> {
    const known: unknown[] = await this.db.query(`SELECT 1 FROM partners WHERE id = $1`, [id]);
    return known.length > 0;
  }

  /** Whether a partner of this id exists, as a transaction sees it. */
  async existsIn(m: EntityManager, id: string): Promise<boolean> {
    const [partner]: { id: string }[] = await m.query('SELECT id FROM partners WHERE id = $1', [id]);
    return partner !== undefined;
  }

  async find(id: string): Promise<DirectoryRow | undefined> {
    const [row]: DirectoryRow[] = await this.db.query(FIND_PARTNER, [id]);
    return row;
  }

  /** `name`: an ILIKE pattern or null; after: the cursor's position or null. */
  page(name: string | null, after: { createdAt: string; id: string } | null, limit: number): Promise<DirectoryRow[]> {
    return this.db.query(PARTNER_PAGE, [name, after?.createdAt ?? null, after?.id ?? null, limit]);
  }

  async profile(id: string): Promise<ProfileRow | undefined> {
    const [row]: ProfileRow[] = await this.db.query(VIEW, [id]);
    return row;
  }

  /** The partner's Operations URL, its row locked; undefined when there is no such partner. */
  async lockOperationsUrl(m: EntityManager, id: string): Promise<{ operations_url: string | null } | undefined> {
    const [was]: { operations_url: string | null }[] = await m.query(
      'SELECT operations_url FROM partners WHERE id = $1 FOR UPDATE',
      [id],
    );
    return was;
  }

  async setOperationsUrl(m: EntityManager, id: string, url: string | null): Promise<void> {
    await m.query('UPDATE partners SET operations_url = $2 WHERE id = $1', [id, url]);
  }

  /** PostgreSQL's clock, as the authentication's comparison uses. */
  async now(m: EntityManager): Promise<Date> {
    const [{ now }]: { now: Date }[] = await m.query(`SELECT now() AS now`);
    return now;
  }

  /** A new partner of the id it was given (its signing key is sealed for that row); saved as TypeORM saves a row. */
  async insert(m: EntityManager, values: Omit<Partner, 'createdAt'>): Promise<Partner> {
    return m.save(m.create(Partner, values));
  }

  /** The partner whose current API key has this hash, or whose replaced one does until it expires. */
  async byApiKeyHash(hash: string): Promise<Partner | null> {
    return this.db
      .getRepository(Partner)
      .createQueryBuilder('p')
      .where('p.api_key_hash = :hash', { hash })
      .orWhere('(p.previous_api_key_hash = :hash AND p.previous_key_expires_at > now())', { hash })
      .getOne();
  }
}
