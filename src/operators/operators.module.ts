import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig, moduleFor, PlatformModule } from '../platform/index.js';
import { AuditLog } from './audit/audit-log.js';
import { AuditEntryRepository } from './audit/audit-entry.repository.js';
import { AuditController } from './audit/audit.controller.js';
import { OperatorCredentials } from './operator-credentials.js';
import { OperatorRepository } from './operator.repository.js';
import { OperatorsBootstrap } from './operators-bootstrap.js';
import { OperatorsController } from './operators.controller.js';
import { OperatorsService } from './operators.service.js';

/** Operators, their roles and credentials, the audit log, and the access every route declares. */
@Module({})
export class OperatorsModule {
  static forRoot(config: AppConfig): DynamicModule {
    return moduleFor(OperatorsModule, config, {
      imports: [PlatformModule.forRoot(config)],
      controllers: { api: [OperatorsController, AuditController] },
      providers: {
        api: [
          OperatorCredentials,
          OperatorsService,
          OperatorsBootstrap,
          AuditLog,
          AuditEntryRepository,
          OperatorRepository,
        ],
      },
      exports: [OperatorCredentials, AuditLog],
    });
  }
}
