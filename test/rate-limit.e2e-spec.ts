import { PARTNER_RATE_LIMIT } from '../src/partners/rate-limiter.js';
import { createPartner, harness, TestApp } from './support/harness.js';

describe('partner rate limit', () => {
  let t: TestApp;
  const e2e = harness(
    { ROLE: 'api' },
    { configure: (b) => b.overrideProvider(PARTNER_RATE_LIMIT).useValue(5), partner: null },
  );
  beforeAll(() => ({ t } = e2e));

  it('answers 429 with Retry-After past the limit, per partner', async () => {
    const [p, other] = [await createPartner(t, 'Busy'), await createPartner(t, 'Calm')];
    const c = (await t.as(p.apiKey, 'post', '/v1/companies', { name: 'X' }).expect(201)).body.id;
    // 20 at once fall into at most two one-second windows of 5: at least 10 are refused.
    const results = await Promise.all(
      Array.from({ length: 20 }, () => t.as(p.apiKey, 'get', `/v1/companies/${c}/status`)),
    );
    const limited = results.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(10);
    expect(results.filter((r) => r.status !== 429).every((r) => r.status === 200)).toBe(true);
    expect(limited[0].headers['retry-after']).toBe('1');
    expect(limited[0].body).toMatchObject({ statusCode: 429, error: 'Too Many Requests' });
    await t.as(other.apiKey, 'get', `/v1/companies/${c}`).expect(404); // its own budget, and no access
  });
});
