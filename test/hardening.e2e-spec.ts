import { ConsoleLogger } from '@nestjs/common';
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import request from 'supertest';
import { keyId, SecretBox } from '../src/platform/crypto/secret-box.js';
import { SecretsReencryption } from '../src/partners/secrets-reencryption.js';
import { ADMIN_TOKEN, createPartner, harness, Partner, TestApp } from './support/harness.js';

/** Every line the Nest logger prints while the suite runs, as the service would print it, unredacted. */
class CapturingLogger extends ConsoleLogger {
  readonly lines: string[] = [];
  constructor() {
    super({ logLevels: ['error', 'warn', 'log'] });
  }
  protected printMessages(messages: unknown[], context = '', logLevel = 'log'): void {
    for (const m of messages)
      this.lines.push(
        `${logLevel} [${context}] ${m instanceof Error ? `${m.stack} ${JSON.stringify(m)}` : typeof m === 'string' ? m : JSON.stringify(m)}`,
      );
  }
  protected printStackTrace(stack?: string): void {
    if (stack) this.lines.push(stack);
  }
}

const TABLES = [
  'partners',
  'companies',
  'limit_requests',
  'withdrawal_requests',
  'loans',
  'loan_payments',
  'callbacks',
  'callback_attempts',
  'idempotency_keys',
];

describe('hostile input, idempotency and secrets', () => {
  let t: TestApp;
  let p: Partner;
  let company: string;
  const logger = new CapturingLogger();
  const counts = async () =>
    (await t.sql(`SELECT ${TABLES.map((x) => `(SELECT count(*)::int FROM ${x}) AS ${x}`).join(', ')}`))[0];
  const raw = (path: string, body: string | Buffer, auth = `Bearer ${p.apiKey}`) =>
    t.http().post(path).set('Authorization', auth).set('Content-Type', 'application/json').send(body);

  // The partner comes after the logger is in place.
  const e2e = harness({ ROLE: 'api' }, { partner: null });
  beforeAll(async () => {
    ({ t } = e2e);
    t.app.useLogger(logger);
    p = await createPartner(t);
    company = (await t.as(p.apiKey, 'post', '/v1/companies', { name: 'Acme' }).expect(201)).body.id;
    const limit = (
      await t.as(p.apiKey, 'post', `/v1/companies/${company}/limit-requests`, { amount: '100000' }).expect(201)
    ).body.id;
    await t.admin('post', `/admin/v1/limit-requests/${limit}/approve`).expect(200);
  });

  describe('no 5xx from any input, one error shape', () => {
    it.each([
      ['a NUL in a property', '{"name":"a\\u0000b"}', 'name must be valid Unicode text without NUL characters'],
      [
        'a lone surrogate in a property',
        '{"name":"\\ud800"}',
        'name must be valid Unicode text without NUL characters',
      ],
      [
        'a NUL in a property name',
        '{"na\\u0000me":"x"}',
        'a property name must be valid Unicode text without NUL characters',
      ],
      [
        'a lone surrogate deeper in',
        '{"name":"x","extra":{"a":["ok","\\udc00"]}}',
        'extra.a[1] must be valid Unicode text without NUL characters',
      ],
      [
        'JSON 5000 levels deep',
        `${'['.repeat(5000)}${']'.repeat(5000)}`,
        'Request body nests JSON deeper than 32 levels',
      ],
      [
        'JSON 33 levels deep in a string-heavy body',
        `{"name":"[[[{{{\\"","x":${'{"a":'.repeat(33)}1${'}'.repeat(33)}}`,
        'Request body nests JSON deeper than 32 levels',
      ],
      ['broken JSON', '{"name":', 'Request body is not valid JSON'],
      [
        'a __proto__ property',
        '{"name":"x","__proto__":{"isAdmin":true}}',
        'Request body must not contain a __proto__ or constructor.prototype property',
      ],
      [
        'a constructor.prototype property',
        '{"name":"x","constructor":{"prototype":{"isAdmin":true}}}',
        'Request body must not contain a __proto__ or constructor.prototype property',
      ],
      ['a constructor property', '{"name":"x","constructor":1}', 'property constructor should not exist'],
      ['a JSON string instead of an object', '"x"', 'Request body is not valid JSON'],
    ])('%s → 400 naming it, nothing stored', async (_label, body, message) => {
      const before = await counts();
      const res = await raw('/v1/companies', body).expect(400);
      expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: [message], code: 'invalid_request' });
      expect(await counts()).toEqual(before);
    });

    it('a body over 64 KiB → 413 in the one shape, with or without a Content-Length, nothing stored', async () => {
      const before = await counts();
      const big = JSON.stringify({ name: 'x'.repeat(65 * 1024) });
      const expected = {
        statusCode: 413,
        error: 'Payload Too Large',
        message: 'Request body exceeds 64 KiB',
        code: 'body_too_large',
      };
      expect((await raw('/v1/companies', big).expect(413)).body).toEqual(expected);
      const streamed = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const { port } = t.app.getHttpServer().listen(0).address() as { port: number };
        const req = http.request({
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/v1/companies',
          headers: { Authorization: `Bearer ${p.apiKey}`, 'Content-Type': 'application/json' },
        });
        req.on('response', (res) => {
          let body = '';
          res.on('data', (c) => (body += c)).on('end', () => resolve({ status: res.statusCode!, body }));
        });
        req.on('error', reject);
        req.write(big); // written before end: no Content-Length, the body is chunked
        req.end();
      }).finally(() => t.app.getHttpServer().close());
      expect(streamed.status).toBe(413);
      expect(JSON.parse(streamed.body)).toEqual(expected);
      expect(await counts()).toEqual(before);
    });

    it('bytes that are not UTF-8 → 400', async () => {
      const bytes = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
      const res = await raw('/v1/companies', bytes)
        .serialize((b: unknown) => b as string)
        .expect(400);
      expect(res.body.message).toEqual(['Request body is not valid UTF-8']);
    });

    it('32 levels of nesting are still parsed (and refused by validation, by name)', async () => {
      const res = await raw('/v1/companies', `{"name":"x","extra":${'['.repeat(31)}${']'.repeat(31)}}`).expect(400);
      expect(res.body.message).toEqual(['property extra should not exist']);
    });

    it.each([
      ['limit=0x10', 'limit must be an integer number'],
      ['limit=1e1', 'limit must be an integer number'],
      ['limit=%205', 'limit must be an integer number'],
      ['limit=', 'limit must be an integer number'],
      ['limit=1&limit=2', 'limit must be an integer number'],
      ['limit=201', 'limit must not be greater than 200'],
      ['message=', 'message must be an integer number'],
      ['message=-0', 'message must be an integer number'],
      ['status=', 'status must be one of the following values: pending, delivered, failed'],
      ['cursor=', 'cursor is not a cursor returned by this endpoint'],
      [
        `cursor=${Buffer.from('seq:99999999999999999999').toString('base64url')}`,
        'cursor is not a cursor returned by this endpoint',
      ],
      [
        `cursor=${Buffer.from('seq:9223372036854775808').toString('base64url')}`,
        'cursor is not a cursor returned by this endpoint',
      ],
      [`cursor=${Buffer.from('seq:1').toString('base64url')}!!`, 'cursor is not a cursor returned by this endpoint'],
      [`cursor=${'A'.repeat(65)}`, 'cursor must be shorter than or equal to 64 characters'],
      ['companyId=nope', 'companyId must be a UUID'],
      [
        'other=1',
        'query parameter other is not accepted; accepted: status, companyId, message, limit, cursor, partnerId, destination',
      ],
    ])('GET /admin/v1/callbacks?%s → 400: %s', async (query, message) => {
      const res = await t.admin('get', `/admin/v1/callbacks?${query}`).expect(400);
      expect(res.body).toEqual({
        statusCode: 400,
        error: 'Bad Request',
        message: expect.arrayContaining([message]),
        code: 'invalid_request',
      });
    });

    it('the largest cursor bigint holds is read', async () => {
      await t
        .admin(
          'get',
          `/admin/v1/callbacks?limit=1&message=0&cursor=${Buffer.from('seq:9223372036854775807').toString('base64url')}`,
        )
        .expect(200);
    });

    it('a path that is not percent-decodable → 400 in the same shape', async () => {
      const res = await t.as(p.apiKey, 'get', '/v1/companies/%E0%A4%A').expect(400);
      expect(res.body).toEqual({
        statusCode: 400,
        error: 'Bad Request',
        message: "Failed to decode param '%E0%A4%A'",
        code: 'invalid_request',
      });
    });

    it.each([
      ['/v1/companies/not-a-uuid', 'companyId must be a UUID'],
      [`/v1/companies/00000000-0000-4000-8000-000000000000/limit-requests/x'--`, 'limitRequestId must be a UUID'],
    ])('GET %s → 400: %s', async (path, message) => {
      const res = await t.as(p.apiKey, 'get', path);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: [message], code: 'invalid_request' });
    });

    it.each([['creditLimit'], ['creditStatus'], ['annualInterestRate'], ['repaymentTermDays']])(
      'a credit change with %s: null → 400 naming it',
      async (prop) => {
        const res = await t.admin('patch', `/admin/v1/companies/${company}/credit`, { [prop]: null }).expect(400);
        expect((res.body.message as string[]).join(' ')).toContain(prop);
      },
    );

    it('answers without X-Powered-By', async () => {
      const res = await t.http().get('/health').expect(200);
      expect(res.headers['x-powered-by']).toBeUndefined();
    });

    it('an unexpected error is a 500 in the one shape, logged without the query parameters', async () => {
      await t.sql(
        `CREATE FUNCTION refuse_partner() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'partners are closed'; END $$`,
      );
      await t.sql(
        `CREATE TRIGGER refuse_partner BEFORE INSERT ON partners FOR EACH ROW EXECUTE FUNCTION refuse_partner()`,
      );
      try {
        // Unchecked against /docs-json: a 500 is never documented, and this one is provoked.
        const res = await request(t.app.getHttpServer())
          .post('/admin/v1/partners')
          .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
          .send({ name: 'Refused' })
          .expect(500);
        expect(res.body).toEqual({
          statusCode: 500,
          error: 'Internal Server Error',
          message: 'Internal server error',
          code: 'internal_error',
        });
        expect(logger.lines.some((l) => l.includes('QueryFailedError') && l.includes('partners are closed'))).toBe(
          true,
        );
      } finally {
        await t.sql(`DROP TRIGGER refuse_partner ON partners`);
      }
    });
  });

  describe('idempotent creates', () => {
    const withdraw = (key: string, body: object = { amount: '10.00' }) =>
      t.as(p.apiKey, 'post', `/v1/companies/${company}/withdrawal`, body).set('Idempotency-Key', key);

    it('a replay is byte-identical: same status, same bytes, same field order', async () => {
      const first = await withdraw('replay-1').expect(201);
      const again = await withdraw('replay-1').expect(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(first.text);
      expect(again.headers['content-type']).toBe(first.headers['content-type']);
      expect(Object.keys(JSON.parse(again.text))).toEqual(Object.keys(first.body));
    });

    it('a lone surrogate in a retried body is refused before anything is created, every time', async () => {
      const before = await counts();
      for (let i = 0; i < 3; i++) {
        const res = await raw(
          `/v1/companies/${company}/withdrawal`,
          '{"amount":"5","status_callback":"http://127.0.0.1:9/\\ud800"}',
        )
          .set('Idempotency-Key', 'surrogate')
          .expect(400);
        expect(res.body.message).toEqual(['status_callback must be valid Unicode text without NUL characters']);
      }
      expect(await counts()).toEqual(before);
    });

    it('a retried create whose response cannot be stored creates exactly one resource', async () => {
      // PostgreSQL itself refuses the store, after the create has committed.
      await t.sql(
        `CREATE FUNCTION refuse_response() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.response IS NOT NULL THEN RAISE EXCEPTION 'no room'; END IF; RETURN NEW; END $$`,
      );
      await t.sql(
        `CREATE TRIGGER refuse_response BEFORE UPDATE ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION refuse_response()`,
      );
      const before = (await counts()).withdrawal_requests as number;
      try {
        const first = await withdraw('unstorable');
        expect(first.status).toBe(201); // created: the client gets its answer
        for (let i = 0; i < 3; i++) {
          const retry = await withdraw('unstorable');
          expect(retry.status).toBe(409);
          expect(retry.body.message).toContain('unknown outcome');
        }
      } finally {
        await t.sql(`DROP TRIGGER refuse_response ON idempotency_keys`);
      }
      expect((await counts()).withdrawal_requests).toBe(before + 1);
      expect(logger.lines.some((l) => l.includes('could not store the response of a completed request'))).toBe(true);
    });

    it('a request refused by a rule releases its key; the same key with another body → 422', async () => {
      await withdraw('rule', { amount: '99999999' }).expect(422);
      await withdraw('rule', { amount: '1' }).expect(201);
      await withdraw('rule', { amount: '2' }).expect(422);
    });

    it('a key older than 24 h is ignored: the request runs again', async () => {
      const first = await withdraw('old').expect(201);
      await t.sql(`UPDATE idempotency_keys SET created_at = now() - interval '24 hours 1 second' WHERE key = 'old'`);
      const second = await withdraw('old').expect(201);
      expect(second.body.id).not.toBe(first.body.id);
      expect(second.headers['idempotent-replayed']).toBeUndefined();
    });

    // (Node trims spaces around header values before the service sees them.)
    it.each([[''], ['é'], ['x'.repeat(256)]])('refuses the Idempotency-Key %p', async (key) => {
      const res = await t.as(p.apiKey, 'post', '/v1/companies', { name: 'K' }).set('Idempotency-Key', key);
      expect(res.status).toBe(400);
    });

    it('a replayed partner creation returns its credentials, kept sealed for the 24 h only', async () => {
      const first = await t
        .admin('post', '/admin/v1/partners', { name: 'Idem' })
        .set('Idempotency-Key', 'partner-1')
        .expect(201);
      const again = await t
        .admin('post', '/admin/v1/partners', { name: 'Idem' })
        .set('Idempotency-Key', 'partner-1')
        .expect(201);
      expect(again.text).toBe(first.text);
      const [row] = await t.sql<{ response: string }>(`SELECT response FROM idempotency_keys WHERE key = 'partner-1'`);
      expect(row.response).toMatch(/^enc2:[0-9a-f]{8}:[A-Za-z0-9_-]+$/);
      // the partner's own key works
      await t.as(first.body.apiKey, 'get', '/v1/companies/00000000-0000-4000-8000-000000000000').expect(404);
    });
  });

  describe('secrets at rest and in logs', () => {
    it('no API key or signing secret, current or previous, appears in clear in the database dump or the logs', async () => {
      const created = await t
        .admin('post', '/admin/v1/partners', { name: 'Dumped' })
        .set('Idempotency-Key', 'dumped')
        .expect(201);
      const rotated = await t.admin('post', `/admin/v1/partners/${created.body.id}/rotate-signing-secret`).expect(200);
      const secrets = [
        created.body.apiKey,
        created.body.signingSecret,
        rotated.body.signingSecret,
        p.apiKey,
        p.signingSecret,
      ];
      const url = new URL(t.config.databaseUrl);
      const dump = execFileSync(
        'pg_dump',
        ['-h', url.hostname, '-p', url.port || '5432', '-U', 'postgres', '--data-only', url.pathname.slice(1)],
        {
          maxBuffer: 64 * 1024 * 1024,
        },
      ).toString('utf8');
      expect(dump).toContain(created.body.id); // the dump is of the right database
      const logs = logger.lines.join('\n');
      for (const s of secrets) {
        // the secret's random part, so neither the whole value nor its base64 body is anywhere
        const core = s.replace(/^(whsec_|fsk_)/, '');
        expect(dump).not.toContain(core);
        expect(logs).not.toContain(core);
      }
      expect(logs).not.toMatch(/whsec_|fsk_/);
    });

    it('/metrics reports pending and failed callbacks, not a count of the whole table', async () => {
      const res = await request(t.app.getHttpServer()).get('/metrics').expect(200);
      expect(res.text).toMatch(/funding_callbacks\{status="pending"\} \d+/);
      expect(res.text).not.toMatch(/funding_callbacks\{status="delivered"\}/);
    });
  });

  describe('SECRETS_KEY rotation', () => {
    const OLD = 'old-secrets-key-for-the-rotation-test-0001';
    const NEW = 'new-secrets-key-for-the-rotation-test-0002';
    let t2: TestApp;
    // A second app beside the first, on a database of its own.
    const second = harness({ ROLE: 'api', SECRETS_KEY: `${NEW},${OLD}` }, { partner: null });
    beforeAll(() => ({ t: t2 } = second));

    it('re-seals at start what an older key sealed, and what was still in clear', async () => {
      const partner = await createPartner(t2, 'Rotated');
      const oldBox = new SecretBox([OLD]);
      await t2.sql(`UPDATE partners SET signing_secret = $2, previous_signing_secret = 'whsec_legacy' WHERE id = $1`, [
        partner.id,
        oldBox.seal(partner.signingSecret, 'partners.signing_secret', partner.id),
      ]);
      await t2.app.get(SecretsReencryption).onApplicationBootstrap();
      const [row] = await t2.sql<{ signing_secret: string; previous_signing_secret: string }>(
        'SELECT signing_secret, previous_signing_secret FROM partners WHERE id = $1',
        [partner.id],
      );
      const newBox = new SecretBox([NEW]);
      expect(row.signing_secret.startsWith(`enc2:${keyId(NEW)}:`)).toBe(true);
      expect(row.previous_signing_secret.startsWith(`enc2:${keyId(NEW)}:`)).toBe(true);
      expect(newBox.open(row.signing_secret, 'partners.signing_secret', partner.id)).toBe(partner.signingSecret);
      expect(newBox.open(row.previous_signing_secret, 'partners.signing_secret', partner.id)).toBe('whsec_legacy');
    });

    it("re-seals partners' client certificate keys and Ed25519 signing keys too", async () => {
      const partner = (
        await t2.admin('post', '/admin/v1/partners', { name: 'Rotated TLS', signatureScheme: 'ed25519' }).expect(201)
      ).body;
      const oldBox = new SecretBox([OLD]);
      const [{ signing_secret: current }] = await t2.sql<{ signing_secret: string }>(
        'SELECT signing_secret FROM partners WHERE id = $1',
        [partner.id],
      );
      const whsk = new SecretBox([NEW, OLD]).open(current, 'partners.signing_secret', partner.id);
      // Only sealing is at stake here: the stored text need not be a real key.
      const key = '-----BEGIN PRIVATE KEY-----\nnot-a-real-key\n-----END PRIVATE KEY-----';
      await t2.sql('UPDATE partners SET signing_secret = $2 WHERE id = $1', [
        partner.id,
        oldBox.seal(whsk, 'partners.signing_secret', partner.id),
      ]);
      await t2.sql(
        `INSERT INTO partner_client_certificates (partner_id, certificate, private_key, subject, issuer, not_after, fingerprint256)
         VALUES ($1, 'pem', $2, 'CN=x', 'CN=ca', now() + interval '30 days', 'AB')`,
        [partner.id, oldBox.seal(key, 'partner_client_certificates.private_key', partner.id)],
      );
      await t2.app.get(SecretsReencryption).onApplicationBootstrap();
      const [row] = await t2.sql<{ signing_secret: string; private_key: string }>(
        'SELECT p.signing_secret, c.private_key FROM partners p JOIN partner_client_certificates c ON c.partner_id = p.id WHERE p.id = $1',
        [partner.id],
      );
      const newBox = new SecretBox([NEW]);
      expect(newBox.open(row.signing_secret, 'partners.signing_secret', partner.id)).toBe(whsk);
      expect(whsk).toMatch(/^whsk_/);
      expect(newBox.open(row.private_key, 'partner_client_certificates.private_key', partner.id)).toBe(key);
      await t2.sql('DELETE FROM partner_client_certificates WHERE partner_id = $1', [partner.id]);
    });

    it('refuses to start when a stored secret was sealed with a key it does not list', async () => {
      const partner = await createPartner(t2, 'Stranger');
      const stranger = new SecretBox(['a-key-nobody-configured-here-000000000']).seal(
        'whsec_x',
        'partners.signing_secret',
        partner.id,
      );
      await t2.sql('UPDATE partners SET signing_secret = $2 WHERE id = $1', [partner.id, stranger]);
      await expect(t2.app.get(SecretsReencryption).onApplicationBootstrap()).rejects.toThrow(
        `sealed with key ${keyId('a-key-nobody-configured-here-000000000')}, which SECRETS_KEY does not list`,
      );
      await t2.sql('DELETE FROM partners WHERE id = $1', [partner.id]);
    });
  });
});
