import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlPool } from '../../platform/index.js';
import { Company } from './company.entity.js';
import { OneRowBatches } from './one-row-batches.js';

/** The `companies` rows of one-row changes (CompanyChanges), read and written in batches on SqlPool's connections. */
@Injectable()
export class CompanyRows extends OneRowBatches<Company> {
  constructor(@InjectDataSource() db: DataSource, sql: SqlPool) {
    super(db, sql.pool, db.getMetadata(Company));
  }
}
