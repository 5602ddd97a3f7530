import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig, moduleFor, PlatformModule } from '../platform/index.js';
import { CallbacksModule } from '../callbacks/index.js';
import { DeliveryModule } from '../delivery/index.js';
import { EgressModule } from '../egress/index.js';
import { OperatorsModule } from '../operators/index.js';
import { CallbackUrlChanges } from './callback-urls/callback-url-changes.service.js';
import { CallbackUrlInventoryController } from './callback-urls/callback-url-inventory.controller.js';
import { CallbackUrlList } from './callback-urls/callback-url-list.service.js';
import { CallbackUrlRepository } from './callback-urls/callback-url.repository.js';
import { CallbackUrlMove } from './callback-urls/callback-url-move.service.js';
import { TestCallbacksController } from './test-callbacks/test-callbacks.controller.js';
import { TestCallbacks } from './test-callbacks/test-callbacks.service.js';
import { TestTargets } from './test-callbacks/test-callback-targets.js';
import { TestTargetRepository } from './test-callbacks/test-target.repository.js';
import {
  CompanyCallbackController,
  LimitRequestCallbackController,
  WithdrawalCallbackControllerA,
  WithdrawalCallbackControllerB,
} from './callback-urls/callback-url.controllers.js';
import { CompaniesController, CreditAdminController, CreditTermsController } from './companies/companies.controller.js';
import { CompaniesService } from './companies/companies.service.js';
import { CompanyChanges } from './domain/company-changes.js';
import { CompanyRows } from './domain/company-rows.js';
import { OneRowRepository } from './domain/one-row.repository.js';
import { FundingRowRepository } from './domain/funding-row.repository.js';
import { LoanPaymentRepository } from './loans/loan-payment.repository.js';
import { CompanyLocks } from './domain/company-locks.js';
import { DomainTransitions } from './domain/domain-transitions.js';
import { UrlMoveRepository } from './domain/url-move.repository.js';
import { UrlMoves } from './domain/url-moves.js';
import { LimitRequestsAdminController, LimitRequestsController } from './limit-requests/limit-requests.controller.js';
import { LimitRequestsService } from './limit-requests/limit-requests.service.js';
import { LoansAdminController, LoansController } from './loans/loans.controller.js';
import { LoansService } from './loans/loans.service.js';
import {
  WithdrawalsAdminController,
  WithdrawalsControllerA,
  WithdrawalsControllerB,
} from './withdrawals/withdrawals.controller.js';
import { WithdrawalsService } from './withdrawals/withdrawals.service.js';

/** The funding domain: companies, limit requests, withdrawals, loans, and their callback URLs. */
@Module({})
export class FundingModule {
  static forRoot(config: AppConfig): DynamicModule {
    return moduleFor(FundingModule, config, {
      imports: [
        PlatformModule.forRoot(config),
        EgressModule.forRoot(config),
        OperatorsModule.forRoot(config),
        CallbacksModule.forRoot(config),
        DeliveryModule.forRoot(config),
      ],
      controllers: {
        api: [
          CompaniesController,
          CreditTermsController,
          CreditAdminController,
          LimitRequestsController,
          LimitRequestsAdminController,
          WithdrawalsControllerA,
          WithdrawalsControllerB,
          WithdrawalsAdminController,
          CompanyCallbackController,
          LimitRequestCallbackController,
          WithdrawalCallbackControllerA,
          WithdrawalCallbackControllerB,
          CallbackUrlInventoryController,
          TestCallbacksController,
          LoansController,
          LoansAdminController,
        ],
      },
      providers: {
        api: [
          CompaniesService,
          LimitRequestsService,
          WithdrawalsService,
          LoansService,
          DomainTransitions,
          UrlMoves,
          UrlMoveRepository,
          CompanyChanges,
          OneRowRepository,
          CompanyRows,
          CompanyLocks,
          FundingRowRepository,
          LoanPaymentRepository,
          CallbackUrlChanges,
          CallbackUrlList,
          CallbackUrlRepository,
          CallbackUrlMove,
          TestTargets,
          TestTargetRepository,
          TestCallbacks,
        ],
      },
      exports: [CompaniesService, CallbackUrlList, CallbackUrlMove, TestCallbacks],
    });
  }
}
