import { invalidProperty, type VariantNames } from '../../platform/index.js';

type CompanyCallbackProperty = VariantNames['companyCallbackProperty'];

/**
 * The API variant's property for the organization callback URL, for a body that may carry it
 * (creating a company, PATCHing its callback URLs). The other variant's name is refused with a
 * 400 naming both, never silently ignored.
 */
export function companyCallbackProperty(
  names: VariantNames,
  body: Partial<Record<CompanyCallbackProperty, unknown>>,
): CompanyCallbackProperty {
  const own = names.companyCallbackProperty;
  const other = own === 'callback' ? 'status_callback' : 'callback';
  if (body[other] !== undefined)
    throw invalidProperty(`property ${other} is not accepted by this API variant; use ${own}`);
  return own;
}
