import { Logger } from '@nestjs/common';
import { Client } from 'pg';
import { DataSource, DataSourceOptions, QueryRunner } from 'typeorm';
import { InitialSchema1763800000000 } from './migrations/1763800000000-initial-schema.js';
import { Destinations1763900000000 } from './migrations/1763900000000-destinations.js';
import { IdempotencySealedResponse1763900100000 } from './migrations/1763900100000-idempotency-sealed-response.js';
import { CallbacksPartnerIndex1763900200000 } from './migrations/1763900200000-callbacks-partner-index.js';
import { RetentionIndexes1763900300000 } from './migrations/1763900300000-retention-indexes.js';
import { DeliveryCoreV21764000000000 } from './migrations/1764000000000-delivery-core-v2.js';
import { DashboardDueIndex1764000100000 } from './migrations/1764000100000-dashboard-due-index.js';
import { SelfServiceCallbacks1764100000000 } from './migrations/1764100000000-self-service-callbacks.js';
import { SelfServiceIndexes1764100100000 } from './migrations/1764100100000-self-service-indexes.js';
import { OperatorsAndAudit1764200000000 } from './migrations/1764200000000-operators-and-audit.js';
import { CallbackTraceParent1764300000000 } from './migrations/1764300000000-callback-trace-parent.js';
import { RevocableBootstrap1764400000000 } from './migrations/1764400000000-revocable-bootstrap.js';
import { CallbackNextUrl1764400100000 } from './migrations/1764400100000-callback-next-url.js';
import { AdmissionIndex1764450000000 } from './migrations/1764450000000-admission-index.js';
import { OperationalEvents1764500000000 } from './migrations/1764500000000-operational-events.js';
import { PartnerSignatureScheme1764541000000 } from './migrations/1764541000000-partner-signature-scheme.js';
import { PartnerOperationsUrl1764541100000 } from './migrations/1764541100000-partner-operations-url.js';
import { PartnerClientCertificates1764541200000 } from './migrations/1764541200000-partner-client-certificates.js';
import { CallbackOriginInlined1764600000000 } from './migrations/1764600000000-callback-origin-inlined.js';
import { PartnerDestinations1764700000000 } from './migrations/1764700000000-partner-destinations.js';
import { SealedValuesBoundToRows1764700100000 } from './migrations/1764700100000-sealed-values-bound-to-rows.js';
import { ReplayIndex1764700300000 } from './migrations/1764700300000-replay-index.js';
import { giveSecretsKeys } from './migration-secrets.js';
import { StartUpRepository } from './start-up.repository.js';
import { PartnerPortal1764700400000 } from './migrations/1764700400000-partner-portal.js';
import { AttemptPartner1764700500000 } from './migrations/1764700500000-attempt-partner.js';
import { DestinationProbeRequest1764700610000 } from './migrations/1764700610000-destination-probe-request.js';
import { PortalLinkOwners1764700650000 } from './migrations/1764700650000-portal-link-owners.js';
import { AuditPartnerActor1764800100000 } from './migrations/1764800100000-audit-partner-actor.js';
import { UrlDeliveredIndex1764800200000 } from './migrations/1764800200000-url-delivered-index.js';
import { PartnerKeyRotatedAt1764810000000 } from './migrations/1764810000000-partner-key-rotated-at.js';
import { PartnerLookupIndexes1764810100000 } from './migrations/1764810100000-partner-lookup-indexes.js';
import { TestEvents1764820000000 } from './migrations/1764820000000-test-events.js';
import { AttemptExchange1764830590000 } from './migrations/1764830590000-attempt-exchange.js';

export const MIGRATIONS = [
  InitialSchema1763800000000,
  Destinations1763900000000,
  IdempotencySealedResponse1763900100000,
  CallbacksPartnerIndex1763900200000,
  RetentionIndexes1763900300000,
  DeliveryCoreV21764000000000,
  DashboardDueIndex1764000100000,
  SelfServiceCallbacks1764100000000,
  SelfServiceIndexes1764100100000,
  OperatorsAndAudit1764200000000,
  CallbackTraceParent1764300000000,
  RevocableBootstrap1764400000000,
  CallbackNextUrl1764400100000,
  AdmissionIndex1764450000000,
  OperationalEvents1764500000000,
  PartnerSignatureScheme1764541000000,
  PartnerOperationsUrl1764541100000,
  PartnerClientCertificates1764541200000,
  CallbackOriginInlined1764600000000,
  PartnerDestinations1764700000000,
  SealedValuesBoundToRows1764700100000,
  ReplayIndex1764700300000,
  PartnerPortal1764700400000,
  AttemptPartner1764700500000,
  DestinationProbeRequest1764700610000,
  PortalLinkOwners1764700650000,
  AuditPartnerActor1764800100000,
  UrlDeliveredIndex1764800200000,
  PartnerKeyRotatedAt1764810000000,
  PartnerLookupIndexes1764810100000,
  TestEvents1764820000000,
  AttemptExchange1764830590000,
];

const MIGRATION_LOCK_POLL_MS = 200;

/**
 * The planner settings of the connections that run hand-written SQL (SqlPool's, the relay's): no sequential or
 * bitmap scans where an index can serve (a bitmap scan reads every matching index entry before its
 * LIMIT applies). A prepared statement keeps the generic plan it got on the tables as they were (a
 * few rows, at start) until an ANALYZE or VACUUM invalidates it; without autovacuum that may be
 * never, and a plan that read a table of twenty rows whole reads a backlog of a million whole on
 * every run. With these settings each statement's plan is an index's whatever the statistics and
 * the table's history (test/delivery-plans.e2e-spec.ts, "planned while the tables were small"); a
 * table with no usable index is still read as it must be. No JIT: a scan disabled that way is
 * priced past `jit_above_cost`, and compiling would cost a statement of a few rows a hundred
 * milliseconds.
 * And each statement runs its generic plan from its first run (`plan_cache_mode`), planned once per
 * connection: the plan the tests check. Left to choose, PostgreSQL compares the generic plan's
 * estimate with the custom plans' and, on tables never analysed, may plan a statement anew for
 * every run (settlement's record and its read of destinations, admission's admit), at a cost above
 * the run's.
 */
export const PLANNER_SETTINGS =
  '-c enable_seqscan=off -c enable_bitmapscan=off -c jit=off -c plan_cache_mode=force_generic_plan';

/**
 * The ORM's connections: no bitmap scans and no JIT, as PLANNER_SETTINGS, but sequential scans
 * where PostgreSQL prefers them. The ORM prepares no statement by name, so each of its statements
 * is planned for its values on the tables as they are, never with a plan kept from small tables;
 * a bitmap scan would still read every matching index entry before a LIMIT applies, and JIT
 * compile a statement of a few rows for longer than it runs. Index scans forced on every
 * connection cost the API path PostgreSQL CPU per change (docs/architecture.md); the statements
 * that must read by index whatever the statistics run on SqlPool.
 */
export const ORM_PLANNER_SETTINGS = '-c enable_bitmapscan=off -c jit=off';

/**
 * Connections per process: the ORM's (the data source's pool) and the hand-written SQL's
 * (SqlPool), twenty in all. The hot paths batch their statements (one-row writes, loads,
 * settlements), so a few connections carry them.
 */
export const ORM_POOL_MAX = 10;
export const SQL_POOL_MAX = 10;

/** The data source's options; the entities come from where the application is put together (src/data-source.ts). */
export function databaseOptions(databaseUrl: string, entities: DataSourceOptions['entities']): DataSourceOptions {
  return {
    type: 'postgres',
    url: databaseUrl,
    entities,
    migrations: MIGRATIONS,
    migrationsRun: false,
    synchronize: false,
    extra: { max: ORM_POOL_MAX, options: ORM_PLANNER_SETTINGS },
  };
}

/**
 * Creates the database named in the URL when it does not exist yet. Processes starting together
 * (`docker compose up --scale worker=3`) take turns on an advisory lock in the maintenance
 * database: two concurrent CREATE DATABASE of one name fail with a unique violation on
 * pg_database, not with "already exists".
 */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!name) throw new Error('DATABASE_URL names no database');
  url.pathname = '/postgres';
  const client = new Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await StartUpRepository.lockCreation(client);
    if (!(await StartUpRepository.databaseExists(client, name))) {
      await StartUpRepository.createDatabase(client, name).catch((e: { code?: string }) => {
        // created meanwhile by something that does not take the lock
        if (e.code !== '42P04' && e.code !== '23505') throw e;
      });
    }
  } finally {
    await client.end(); // ends the session, and with it the advisory lock
  }
}

/**
 * Connects and migrates; several processes starting together take turns on an advisory lock.
 * `secretsKeys` (SECRETS_KEY) are for the migrations that re-seal stored secrets.
 */
export async function openDatabase(
  options: DataSourceOptions & { url?: string },
  secretsKeys: string[] = [],
): Promise<DataSource> {
  await ensureDatabase(options.url!);
  const db = new DataSource(options);
  giveSecretsKeys(db, secretsKeys);
  await db.initialize();
  const lock = db.createQueryRunner();
  try {
    // Polled, not a blocking pg_advisory_lock: a session blocked in that statement holds a
    // snapshot, and a migration building an index CONCURRENTLY waits for every older snapshot,
    // so the two would wait on each other for ever.
    while (!(await StartUpRepository.tryMigrationLock(lock))) {
      await new Promise((r) => setTimeout(r, MIGRATION_LOCK_POLL_MS));
    }
    await db.runMigrations({ transaction: 'each' });
    await warnWithoutAutovacuum(lock);
  } finally {
    await StartUpRepository.releaseMigrationLock(lock).catch(() => undefined);
    await lock.release();
  }
  return db;
}

/**
 * `callbacks` is a queue: every delivery updates its row twice, and admission reads the head of
 * its partial indexes. Without autovacuum, dead index entries pile up at that head and the
 * statistics go stale, and admission slows as a backlog drains (a 1,000,000 backlog drained at
 * half the rate until an ANALYZE). PostgreSQL runs it by default; say so when it is off.
 */
async function warnWithoutAutovacuum(q: QueryRunner): Promise<void> {
  if ((await StartUpRepository.autovacuum(q)) !== 'on') {
    new Logger('Database').warn(
      'PostgreSQL runs with autovacuum off: the callbacks queue needs VACUUM and ANALYZE as it drains ' +
        '(docs/operations.md, "PostgreSQL")',
    );
  }
}

/**
 * PostgreSQL refused what a statement holds (an invalid value, a violated constraint), as opposed
 * to being out of reach.
 */
export function isDataError(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' && /^(22|23)/.test(code);
}
