import { keepVariant, variantOnly } from './api-variant-doc.js';

describe('keepVariant', () => {
  const document = () => ({
    components: {
      schemas: {
        Company: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            callback: { type: 'string', ...variantOnly('A') },
            status_callback: { type: 'string', ...variantOnly('B') },
          },
          required: ['name', 'callback', 'status_callback'],
        },
      },
    },
    paths: {
      '/v1/companies': {
        post: {
          callbacks: { callback: { ...variantOnly('A'), '{$request.body#/callback}': {} }, other: { '{x}': {} } },
        },
      },
    },
  });

  it.each([
    ['A', 'callback', 'status_callback'],
    ['B', 'status_callback', 'callback'],
  ] as const)(
    'variant %s keeps %s and drops %s, from properties, required and callbacks, and leaves no mark',
    (variant, own, other) => {
      const doc = keepVariant(document(), variant);
      const company = doc.components.schemas.Company;
      expect(Object.keys(company.properties)).toEqual(['name', own]);
      expect(company.required).toEqual(['name', own]);
      expect(Object.keys(doc.paths['/v1/companies'].post.callbacks)).toEqual(
        variant === 'A' ? ['callback', 'other'] : ['other'],
      );
      expect(JSON.stringify(doc)).not.toContain('x-variant');
      expect(JSON.stringify(doc)).not.toContain(`"${other}"`);
    },
  );
});
