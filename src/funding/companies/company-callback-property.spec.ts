import { DomainError } from '../../platform/http/domain-error.js';
import { VARIANTS } from '../../platform/config/variant.js';
import { companyCallbackProperty } from './company-callback-property.js';

describe('the organization callback property of a body', () => {
  it("is the variant's own property, present or absent", () => {
    expect(companyCallbackProperty(VARIANTS.A, {})).toBe('callback');
    expect(companyCallbackProperty(VARIANTS.A, { callback: null })).toBe('callback');
    expect(companyCallbackProperty(VARIANTS.B, { status_callback: 'https://x.example/' })).toBe('status_callback');
  });

  it("refuses the other variant's property, even null, naming both", () => {
    expect(() => companyCallbackProperty(VARIANTS.A, { status_callback: null })).toThrow(DomainError);
    expect(() => companyCallbackProperty(VARIANTS.A, { status_callback: 'https://x.example/' })).toThrow(
      'property status_callback is not accepted by this API variant; use callback',
    );
    expect(() => companyCallbackProperty(VARIANTS.B, { callback: 'https://x.example/' })).toThrow(
      'property callback is not accepted by this API variant; use status_callback',
    );
  });
});
