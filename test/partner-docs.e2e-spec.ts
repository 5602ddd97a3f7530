import { buildCallbackBody, CallbackMessage } from '../src/callbacks/callback-message.js';
import { CALLBACK_MESSAGES, OPERATIONAL_EVENTS } from '../src/callbacks/event-catalogue.js';
import { harness, Partner, TestApp, until } from './support/harness.js';
import { Receiver } from './support/receiver.js';

type Example = { summary: string; value: Record<string, unknown> };
type Operation = {
  tags?: string[];
  callbacks?: Record<
    string,
    Record<string, { post: { requestBody: { content: Record<string, { examples: Record<string, Example> }> } } }>
  >;
};
type Doc = {
  paths: Record<string, Record<string, Operation>>;
  tags?: { name: string }[];
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
};

const FIVE_KEYS = ['message', 'withdrawalId', 'companyId', 'limitRequestId', 'loanId'];

/**
 * What a partner reads without a repository: the guide the service serves (rendered from
 * docs/partners.md), the OpenAPI view of the partners' routes alone, /docs with the partners'
 * routes first, and the callbacks' examples in the document equal to the event catalogue's.
 */
describe('the documentation a partner can reach', () => {
  let t: TestApp;
  let p: Partner;
  let rx: Receiver;
  const e2e = harness({ ROLE: 'all' });
  beforeAll(() => ({ t, p, rx } = e2e));

  const doc = async (path: string) => (await t.http().get(path).expect(200)).body as Doc;

  it("serves the guide at /docs/partners to anyone: sections linked, no script, the portal's headers", async () => {
    const res = await t.http().get('/docs/partners').expect(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toContain('<h1 id="integrating-as-a-partner">Integrating as a partner</h1>');
    expect(res.text).toContain('<h2 id="moving-your-receiver">Moving your receiver</h2>');
    expect(res.text).not.toMatch(/<script/i);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    // Every link to a section lands on a heading of the page.
    const ids = new Set([...res.text.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]));
    const targets = [...res.text.matchAll(/href="#([^"]+)"/g)].map((m) => m[1]);
    expect(targets.length).toBeGreaterThan(10);
    expect(targets.filter((id) => !ids.has(id))).toEqual([]);
    // No link to a file of the repository, which a partner does not have.
    expect(
      [...res.text.matchAll(/href="([^"#][^"]*)"/g)]
        .map((m) => m[1])
        .filter((h) => !/^(https?:\/\/|\/docs\/partners\/)/.test(h)),
    ).toEqual([]);
    const pictures = [...res.text.matchAll(/<img src="([^"]+)"/g)].map((m) => m[1]);
    expect(pictures).toContain('/docs/partners/portal-overview.png');
    for (const src of [...pictures, '/docs/partners/guide.css']) {
      const asset = await t.http().get(src).expect(200);
      expect(asset.headers['content-security-policy']).toBe(csp);
    }
    await t.http().get('/docs/partners/missing.png').expect(404);
  });

  it("serves the partners' routes alone at /docs/partners/api: /v1 with their callbacks, none of /admin", async () => {
    const partner = await doc('/docs/partners/api-json');
    const paths = Object.keys(partner.paths);
    expect(paths.length).toBeGreaterThan(20);
    expect(paths.filter((path) => !path.startsWith('/v1/'))).toEqual([]);
    expect(paths).toEqual(
      expect.arrayContaining(['/v1/callback-urls', '/v1/callback-urls/move', '/v1/partner/rotate-signing-secret']),
    );
    expect(Object.keys(partner.components.securitySchemes)).toEqual(['partnerApiKey']);
    expect(Object.keys(partner.components.schemas)).toEqual(
      expect.arrayContaining(['CallbackBody', 'OperationalEventBody', 'ErrorResponse']),
    );
    expect(Object.keys(partner.components.schemas)).not.toContain('AuditEntryResponse');
    expect(JSON.stringify(partner)).not.toContain('/admin/');
    const ui = await t.http().get('/docs/partners/api').expect(200);
    expect(ui.text).toContain('swagger');
  });

  it("lists the partners' routes before the operators' in /docs", async () => {
    const full = await doc('/docs-json');
    const paths = Object.keys(full.paths);
    const firstOther = paths.findIndex((path) => !path.startsWith('/v1/'));
    expect(paths.slice(firstOther).filter((path) => path.startsWith('/v1/'))).toEqual([]);
    expect(paths[0]).toMatch(/^\/v1\//);
    const partnerTags = new Set(
      paths.slice(0, firstOther).flatMap((path) => Object.values(full.paths[path]).flatMap((op) => op.tags ?? [])),
    );
    const tags = (full.tags ?? []).map((tag) => tag.name);
    expect(tags.slice(0, partnerTags.size).sort()).toEqual([...partnerTags].sort());
  });

  it("describes each callback with the catalogue's examples, each the body builder's five keys in order", async () => {
    const full = await doc('/docs-json');
    const seen = new Map<string, Example>();
    for (const item of Object.values(full.paths)) {
      for (const op of Object.values(item)) {
        for (const callback of Object.values(op.callbacks ?? {})) {
          for (const [expression, post] of Object.entries(callback)) {
            if (!expression.startsWith('{')) continue;
            for (const [name, example] of Object.entries(post.post.requestBody.content['application/json'].examples))
              seen.set(name, example);
          }
        }
      }
    }
    for (const entry of CALLBACK_MESSAGES) {
      const example = seen.get(entry.name)!;
      expect(example.value).toEqual(entry.example);
      expect(Object.keys(example.value)).toEqual(FIVE_KEYS);
      const { message, ...ids } = example.value as unknown as typeof entry.example;
      expect(JSON.stringify(example.value)).toBe(buildCallbackBody(message, ids));
    }
    for (const event of OPERATIONAL_EVENTS) expect(seen.get(event.type)?.value).toEqual(event.example);
    expect(seen.size).toBe(CALLBACK_MESSAGES.length + OPERATIONAL_EVENTS.length);
  });

  it("shapes each message's example as the body a receiver gets: the same keys, order and ids set", async () => {
    const c = (
      await t.as(p.apiKey, 'post', '/v1/companies', { name: 'Docs', status_callback: rx.url('/docs/cb') }).expect(201)
    ).body.id;
    await t
      .admin('patch', `/admin/v1/companies/${c}/credit`, { creditLimit: '100', creditStatus: 'active' })
      .expect(200);
    const hits = await until(() => (rx.on('/docs/cb').length >= 2 ? rx.on('/docs/cb') : null), {
      what: 'messages 0 and 2',
    });
    for (const hit of hits) {
      const body = JSON.parse(hit.body) as Record<string, unknown>;
      const entry = CALLBACK_MESSAGES.find((e) => e.code === (body.message as CallbackMessage))!;
      expect(Object.keys(body)).toEqual(Object.keys(entry.example));
      const setOf = (o: object) =>
        Object.entries(o)
          .filter(([, v]) => v !== null)
          .map(([k]) => k);
      expect(setOf(body)).toEqual(setOf(entry.example));
    }
  });
});
