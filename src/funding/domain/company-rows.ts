import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Company } from './company.entity.js';
import { OneRowBatches } from './one-row-batches.js';
import { OneRowRepository } from './one-row.repository.js';

/** The `companies` rows of one-row changes (CompanyChanges), read and written in batches by OneRowRepository. */
@Injectable()
export class CompanyRows extends OneRowBatches<Company> {
  constructor(@InjectDataSource() db: DataSource, rows: OneRowRepository) {
    super(rows, db.getMetadata(Company));
  }
}
