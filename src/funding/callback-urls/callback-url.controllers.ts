import { Access } from '../../operators/index.js';
import { Body, Controller, Param, Patch } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Doc, OnlyVariant, ParseUuid } from '../../platform/index.js';
import { CompanyResponse } from '../companies/company.responses.js';
import { LimitRequestResponse } from '../limit-requests/limit-request.responses.js';
import { WithdrawalResponse } from '../withdrawals/withdrawal.responses.js';
import { companyView } from '../companies/company.views.js';
import { limitRequestView } from '../limit-requests/limit-request.views.js';
import { CurrentPartner, Partner } from '../../partners/index.js';
import { withdrawalView } from '../withdrawals/withdrawal.views.js';
import { CompanyCallbackDto, LimitRequestCallbackDto, WithdrawalCallbackDto } from './callback-url.dto.js';
import { CallbackUrlChanges } from './callback-url-changes.service.js';

const uuid = ParseUuid;
const BAD = {
  400:
    'the URL is refused (the message names the property), the property is missing, ' +
    "or another property is given (the other variant's name included)",
};

@ApiTags('companies')
@Access.partner()
@Controller('v1/companies')
export class CompanyCallbackController {
  constructor(private readonly changes: CallbackUrlChanges) {}

  @Doc(
    "Change or remove the organization's callback URL (its waiting callbacks follow; docs/partners.md)",
    CompanyResponse,
    [BAD, 404, 413],
  )
  @Patch(':companyId')
  async change(
    @CurrentPartner() p: Partner,
    @Param('companyId', uuid) companyId: string,
    @Body() dto: CompanyCallbackDto,
  ) {
    return companyView(await this.changes.company(p.id, companyId, { ...dto }), this.changes.names);
  }
}

@ApiTags('limit requests')
@Access.partner()
@Controller('v1/companies/:companyId/limit-requests')
export class LimitRequestCallbackController {
  constructor(private readonly changes: CallbackUrlChanges) {}

  @Doc("Change or remove a limit request's status_callback (its waiting callbacks follow)", LimitRequestResponse, [
    BAD,
    404,
    413,
  ])
  @Patch(':limitRequestId')
  async change(
    @CurrentPartner() p: Partner,
    @Param('companyId', uuid) companyId: string,
    @Param('limitRequestId', uuid) id: string,
    @Body() dto: LimitRequestCallbackDto,
  ) {
    return limitRequestView(await this.changes.limitRequest(p.id, companyId, id, { ...dto }));
  }
}

/** Mounted under each variant's withdrawal collection by the two classes below. */
@Access.partner()
abstract class WithdrawalCallbackRoutes {
  constructor(protected readonly changes: CallbackUrlChanges) {}

  @Doc(
    "Change or remove a withdrawal request's status_callback and/or loan_status_callback " +
      '(their waiting callbacks follow)',
    WithdrawalResponse,
    [BAD, 404, 413],
  )
  @Patch(':withdrawalRequestId')
  async change(
    @CurrentPartner() p: Partner,
    @Param('companyId', uuid) companyId: string,
    @Param('withdrawalRequestId', uuid) id: string,
    @Body() dto: WithdrawalCallbackDto,
  ) {
    return withdrawalView(await this.changes.withdrawal(p.id, companyId, id, { ...dto }));
  }
}

@ApiTags('withdrawal requests')
@OnlyVariant('A')
@Controller('v1/companies/:companyId/withdrawal-requests')
export class WithdrawalCallbackControllerA extends WithdrawalCallbackRoutes {
  constructor(changes: CallbackUrlChanges) {
    super(changes);
  }
}

@ApiTags('withdrawal requests')
@OnlyVariant('B')
@Controller('v1/companies/:companyId/withdrawal')
export class WithdrawalCallbackControllerB extends WithdrawalCallbackRoutes {
  constructor(changes: CallbackUrlChanges) {
    super(changes);
  }
}
