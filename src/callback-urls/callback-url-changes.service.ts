import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { CallbackMessage } from '../callbacks/callback-message.js';
import { Writes } from '../database/writes.js';
import { CallbackUrlValidator } from '../callbacks/callback-url.validator.js';
import { invalidProperty, notFound } from '../http/domain-error.js';
import { companyCallbackProperty } from '../companies/company-callback-property.js';
import { lockOwnedCompany } from '../companies/company-locks.js';
import { Company } from '../companies/company.entity.js';
import { APP_CONFIG, AppConfig } from '../config/app-config.js';
import { VARIANTS, VariantNames } from '../config/variant.js';
import { LimitRequest } from '../limit-requests/limit-request.entity.js';
import { WithdrawalRequest } from '../withdrawals/withdrawal-request.entity.js';
import { followUrl } from '../callbacks/store/url-changes.js';

/** A PATCH body: each property absent (unchanged), a URL, or null (removed). */
export type UrlChanges = Record<string, string | null | undefined>;

/**
 * A partner moves or removes a callback URL (docs/partners.md, "Moving your receiver"): the
 * resource's property and its callbacks change in one transaction, which locks the company first
 * and then the resource, the order every change of a company and its children takes (so they
 * queue, never deadlock, and a change under way records its callbacks with the URL it read before
 * this PATCH's UPDATE of them sees them).
 */
@Injectable()
export class CallbackUrlChanges {
  readonly names: VariantNames;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly urls: CallbackUrlValidator,
    private readonly writes: Writes,
  ) {
    this.names = VARIANTS[config.variant];
  }

  async company(partnerId: string, companyId: string, body: UrlChanges): Promise<Company> {
    const own = companyCallbackProperty(this.names, body);
    const [url] = await this.checked(body, [own]);
    return this.moving(async (m) => {
      const company = await lockOwnedCompany(m, partnerId, companyId);
      company.callbackUrl = url;
      await m.update(Company, { id: company.id }, { callbackUrl: url });
      await followUrl(m, { property: own, companyId, messages: [CallbackMessage.CreditLimitUpdated, CallbackMessage.CreditBalanceUpdated], key: 'companyId', resourceId: companyId }, url);
      return company;
    });
  }

  async limitRequest(partnerId: string, companyId: string, id: string, body: UrlChanges): Promise<{ request: LimitRequest; company: Company }> {
    const [url] = await this.checked(body, ['status_callback']);
    return this.moving(async (m) => {
      const company = await lockOwnedCompany(m, partnerId, companyId);
      const request = await m.findOne(LimitRequest, { where: { id, companyId }, lock: { mode: 'pessimistic_write' } });
      if (!request) throw notFound('Limit request');
      request.statusCallback = url;
      await m.update(LimitRequest, { id }, { statusCallback: url });
      await followUrl(m, { property: 'status_callback', companyId, messages: [CallbackMessage.LimitRequestStatusChanged], key: 'limitRequestId', resourceId: id }, url);
      return { request, company };
    });
  }

  async withdrawal(partnerId: string, companyId: string, id: string, body: UrlChanges): Promise<{ withdrawal: WithdrawalRequest; company: Company }> {
    const properties = (['status_callback', 'loan_status_callback'] as const).filter((p) => body[p] !== undefined);
    if (properties.length === 0) throw invalidProperty('status_callback or loan_status_callback is required: a URL, or null to remove it');
    const urls = await this.checked(body, properties);
    return this.moving(async (m) => {
      const company = await lockOwnedCompany(m, partnerId, companyId);
      const withdrawal = await m.findOne(WithdrawalRequest, { where: { id, companyId }, lock: { mode: 'pessimistic_write' } });
      if (!withdrawal) throw notFound('Withdrawal request');
      for (const [i, property] of properties.entries()) {
        const status = property === 'status_callback';
        if (status) withdrawal.statusCallback = urls[i];
        else withdrawal.loanStatusCallback = urls[i];
        const messages = [status ? CallbackMessage.WithdrawalRequestStatusChanged : CallbackMessage.LoanPaymentRegistered];
        await followUrl(m, { property, companyId, messages, key: 'withdrawalId', resourceId: id }, urls[i]);
      }
      await m.update(WithdrawalRequest, { id }, { statusCallback: withdrawal.statusCallback, loanStatusCallback: withdrawal.loanStatusCallback });
      return { withdrawal, company };
    });
  }

  /** One transaction of the one write path: after its commit, admission looks at once at the callbacks it moved. */
  private moving<T>(work: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.writes.transaction(work);
  }

  /** Each property's URL as it will be stored (checked as at creation), or null to remove it; a property left out is a 400. */
  private async checked(body: UrlChanges, properties: string[]): Promise<(string | null)[]> {
    const urls: (string | null)[] = [];
    for (const p of properties) {
      if (body[p] === undefined) throw invalidProperty(`${p} is required: a URL, or null to remove it`);
      urls.push(await this.urls.check(p, body[p]));
    }
    return urls;
  }
}
