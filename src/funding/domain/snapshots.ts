import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ConnectionMetadataBuilder } from 'typeorm/connection/ConnectionMetadataBuilder.js';
import { CallbackInserts } from '../../callbacks/index.js';
import { AUDIT_LOG_PROVIDERS } from '../../operators/index.js';
import { snapshotFiles, SqlPool } from '../../platform/index.js';
import { Company } from './company.entity.js';
import { OneRowRepository } from './one-row.repository.js';

/** Where the snapshots are committed, from the repository's root. */
export const SNAPSHOT_DIR = 'src/funding/domain/queries';

/** The entities whose tables OneRowBatches serves: one subclass each (CompanyRows). */
export const ONE_ROW_ENTITIES = [Company];

/**
 * The data source of the entities, not connected: their metadata is built as the app's data source
 * builds it (TypeORM's defaults), without a database.
 */
const OFFLINE = new DataSource({ type: 'postgres', entities: ONE_ROW_ENTITIES });

/**
 * OneRowRepository and the repositories whose parts its statements hold, made by Nest as the app
 * makes them, over the offline data source; no statement runs (SqlPool is left empty).
 */
@Module({
  providers: [
    OneRowRepository,
    CallbackInserts,
    ...AUDIT_LOG_PROVIDERS,
    { provide: getDataSourceToken(), useValue: OFFLINE },
    { provide: SqlPool, useValue: {} },
  ],
})
class StatementsOnly {}

/**
 * The committed snapshot of funding's one-row statements (snapshotFiles): for each table
 * OneRowBatches serves, OneRowRepository.statements' read and two writes, as its methods build them.
 */
export async function sqlSnapshots(): Promise<Map<string, string>> {
  const metas = await new ConnectionMetadataBuilder(OFFLINE).buildEntityMetadatas(ONE_ROW_ENTITIES);
  const app = await NestFactory.createApplicationContext(StatementsOnly, { logger: false });
  try {
    const rows = app.get(OneRowRepository);
    const statements = metas.flatMap((m) => rows.statements(m).map((s) => ({ ...s, on: 'sql-pool' })));
    return snapshotFiles('src/funding/domain/one-row.repository.ts', { 'one-row-writes': statements });
  } finally {
    await app.close();
  }
}
