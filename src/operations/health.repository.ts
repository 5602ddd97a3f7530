import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** The readiness probe's statement (health.controller.ts). */
@Injectable()
export class HealthRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Resolves when PostgreSQL answers a statement. */
  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
  }
}
