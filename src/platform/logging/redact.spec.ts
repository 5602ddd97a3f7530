import Fastify from 'fastify';
import fc from 'fast-check';
import { redactSecrets, targetCarriesLinkToken } from './redact.js';

const TOKEN = 'fsp_Q2xpY2tNZUlmWW91Q2FuX0xpbmtUb2tlbl8xMjM0NTY3';
/** Each character percent-encoded, as a client may send any of them. */
const encoded = (s: string) => [...s].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');

/** Spellings of a query carrying the token: each is read by Fastify as a `token` parameter or a value holding it. */
const SPELLINGS = [
  `token=${TOKEN}`,
  `tok%65n=${TOKEN}`,
  `%74%6F%6B%65%6E=${TOKEN}`,
  `TOKEN=${TOKEN}`,
  `Token=${TOKEN}`,
  `token[]=${TOKEN}`,
  `token=a&token=${TOKEN}`,
  `token=${encoded(TOKEN)}`,
  `x=1&tok%65n=${encoded(TOKEN)}`,
  `next=${encoded(TOKEN)}`,
  `a=1;token=${TOKEN}`,
  `token=${TOKEN}#frag`,
];

describe('link tokens in a request target, read as Fastify reads the query', () => {
  const app = Fastify({ routerOptions: { caseSensitive: false, ignoreTrailingSlash: true } });
  let seen: Record<string, unknown> = {};
  app.get('/portal/login', (req, reply) => {
    seen = req.query as Record<string, unknown>;
    return reply.send({});
  });
  afterAll(() => app.close());

  it.each(SPELLINGS)('?%s carries the token: it is never traced, and a log line holds nothing of it', async (query) => {
    const target = `/portal/login?${query}`;
    await app.inject({ method: 'GET', url: target });
    // What Fastify handed the handler holds the token (decoded), under `token` or another name.
    expect(JSON.stringify(seen)).toContain(TOKEN);
    expect(targetCarriesLinkToken(target)).toBe(true);
    const line = redactSecrets(`GET ${target} answered 404`);
    expect(line).not.toContain(TOKEN.slice(4));
    expect(line).not.toContain(encoded(TOKEN).slice(12));
  });

  it('any percent-encoding of the name or the value is caught, whatever Fastify decodes it to', async () => {
    const spell = (s: string) =>
      fc
        .array(fc.boolean(), { minLength: s.length, maxLength: s.length })
        .map((flags) => [...s].map((c, i) => (flags[i] ? encoded(c) : c)).join(''));
    await fc.assert(
      fc.asyncProperty(spell('token'), spell(TOKEN), async (name, value) => {
        const target = `/portal/login?x=1&${name}=${value}`;
        await app.inject({ method: 'GET', url: target });
        expect(seen.token).toBe(TOKEN);
        expect(targetCarriesLinkToken(target)).toBe(true);
        expect(redactSecrets(target)).not.toContain(TOKEN.slice(4, 20));
      }),
      { numRuns: 200 },
    );
  });

  it('a query without a token is traced as it is, and a log keeps it', () => {
    for (const target of ['/v1/callbacks?status=failed&limit=10', '/portal/callbacks?cursor=YWJj', '/portal/login']) {
      expect(targetCarriesLinkToken(target)).toBe(false);
      expect(redactSecrets(`GET ${target}`)).toBe(`GET ${target}`);
    }
  });
});
