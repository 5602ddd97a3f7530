import { Inject, Injectable } from '@nestjs/common';
import { CallbackUrlFollowing } from '../../callbacks/index.js';
import { CallbackUrlValidator } from '../../egress/index.js';
import { APP_CONFIG, AppConfig, invalidProperty, VariantNames, VARIANTS } from '../../platform/index.js';
import { companyCallbackProperty } from '../companies/company-callback-property.js';
import type { OfCompany } from '../company-requests/company-requests.service.js';
import { DomainTransitions, partnersCompany } from '../domain/domain-transitions.js';
import { Resource } from '../domain/resource.js';
import { messagesOf, urlColumn } from '../domain/url-properties.js';
import { Company } from '../domain/company.entity.js';
import { LimitRequest } from '../limit-requests/limit-request.entity.js';
import { WithdrawalRequest } from '../withdrawals/withdrawal-request.entity.js';

/** The rows a PATCH changes, as the domain's one model tracks them: their callback URLs. */
const COMPANY_URL: Resource<Company> = { entity: Company, what: 'Company', tracked: ['callbackUrl'] };
const LIMIT_REQUEST_URL: Resource<LimitRequest> = {
  entity: LimitRequest,
  what: 'Limit request',
  tracked: ['statusCallback'],
};
const WITHDRAWAL_URLS: Resource<WithdrawalRequest> = {
  entity: WithdrawalRequest,
  what: 'Withdrawal request',
  tracked: ['statusCallback', 'loanStatusCallback'],
};

/** A PATCH body: each property absent (unchanged), a URL, or null (removed). */
export type UrlChanges = Record<string, string | null | undefined>;

/**
 * A partner moves or removes a callback URL (docs/partners.md, "Moving your receiver"): the
 * resource's property and its callbacks change in one transaction of the domain's one model
 * (DomainTransitions), which locks the company first and then the resource, the order every
 * change of a company and its children takes (so they queue, never deadlock, and a change under
 * way records its callbacks with the URL it read before this PATCH's UPDATE of them sees them).
 */
@Injectable()
export class CallbackUrlChanges {
  readonly names: VariantNames;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly urls: CallbackUrlValidator,
    private readonly transitions: DomainTransitions,
    private readonly follow: CallbackUrlFollowing,
  ) {
    this.names = VARIANTS[config.variant];
  }

  async company(partnerId: string, companyId: string, body: UrlChanges): Promise<Company> {
    const own = companyCallbackProperty(this.names, body);
    const [url] = await this.checked(body, [own]);
    const { row } = await this.transitions.change({
      resource: COMPANY_URL,
      id: companyId,
      company: partnersCompany(partnerId, companyId),
      effects: async (company, change) => {
        company.callbackUrl = url;
        const messages = messagesOf(urlColumn('companies', 'callback_url'));
        const resources = [{ companyId, id: companyId }];
        await change.run((m) =>
          this.follow.followUrl(m, { property: own, messages, key: 'companyId', resources }, url),
        );
      },
    });
    return row;
  }

  async limitRequest(
    partnerId: string,
    companyId: string,
    id: string,
    body: UrlChanges,
  ): Promise<OfCompany<LimitRequest>> {
    const [url] = await this.checked(body, ['status_callback']);
    return this.transitions.change({
      resource: LIMIT_REQUEST_URL,
      id,
      company: partnersCompany(partnerId, companyId),
      effects: async (request, change) => {
        request.statusCallback = url;
        const messages = messagesOf(urlColumn('limit_requests', 'status_callback'));
        const of = {
          property: 'status_callback',
          messages,
          key: 'limitRequestId' as const,
          resources: [{ companyId, id }],
        };
        await change.run((m) => this.follow.followUrl(m, of, url));
      },
    });
  }

  async withdrawal(
    partnerId: string,
    companyId: string,
    id: string,
    body: UrlChanges,
  ): Promise<OfCompany<WithdrawalRequest>> {
    const properties = (['status_callback', 'loan_status_callback'] as const).filter((p) => body[p] !== undefined);
    if (properties.length === 0)
      throw invalidProperty('status_callback or loan_status_callback is required: a URL, or null to remove it');
    const urls = await this.checked(body, properties);
    return this.transitions.change({
      resource: WITHDRAWAL_URLS,
      id,
      company: partnersCompany(partnerId, companyId),
      effects: async (withdrawal, change) => {
        for (const [i, property] of properties.entries()) {
          if (property === 'status_callback') withdrawal.statusCallback = urls[i];
          else withdrawal.loanStatusCallback = urls[i];
          const messages = messagesOf(urlColumn('withdrawal_requests', property));
          const of = { property, messages, key: 'withdrawalId' as const, resources: [{ companyId, id }] };
          await change.run((m) => this.follow.followUrl(m, of, urls[i]));
        }
      },
    });
  }

  /**
   * Each property's URL as it will be stored (checked as at creation), or null to remove it; a
   * property left out is a 400.
   */
  private async checked(body: UrlChanges, properties: string[]): Promise<(string | null)[]> {
    const urls: (string | null)[] = [];
    for (const p of properties) {
      if (body[p] === undefined) throw invalidProperty(`${p} is required: a URL, or null to remove it`);
      urls.push(await this.urls.check(p, body[p]));
    }
    return urls;
  }
}
