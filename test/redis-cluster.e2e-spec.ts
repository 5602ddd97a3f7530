import { Webhook } from 'standardwebhooks';
import { isCluster, redisNamespace, withRedisOnce } from '../src/platform/database/redis.js';
import { PARTNER_RATE_LIMIT } from '../src/partners/rate-limiter.js';
import { Receiver, webhookHeaders } from './support/receiver.js';
import { RedisCluster, startRedisCluster } from './support/redis-cluster.js';
import { companyWithCallback, createPartner, harness, TestApp, until } from './support/harness.js';

describe('on a 3-master Redis Cluster (REDIS_URL names its seed nodes)', () => {
  let cluster: RedisCluster;
  let rx: Receiver;
  let t: TestApp;

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
  }, 60_000);
  const e2e = harness(() => ({ REDIS_URL: cluster.url, CALLBACK_RETRY_SCHEDULE: '100ms' }), {
    configure: (b) => b.overrideProvider(PARTNER_RATE_LIMIT).useValue(5),
    partner: null,
  });
  // The cluster stops after the app closes (hooks run in the order declared).
  afterAll(async () => {
    await cluster?.stop();
  });
  beforeAll(() => {
    ({ t, rx } = e2e);
    let failedOnce = false;
    rx.answer = (hit, _req, res) => {
      if (hit.path === '/flaky' && !failedOnce) {
        failedOnce = true;
        res.writeHead(500).end();
      } else res.writeHead(204).end();
    };
  });

  it('is ready: /ready asks the node holding the deployment keys', async () => {
    expect((await t.http().get('/ready').expect(200)).body).toEqual({ status: 'ok', database: 'ok', redis: 'ok' });
  });

  it('delivers a change as a signed callback, and a retry through a delayed job', async () => {
    const p = await createPartner(t);
    const ok = await companyWithCallback(t, p, rx.url('/ok'));
    const flaky = await companyWithCallback(t, p, rx.url('/flaky'));
    const id = await ok.change();
    const retried = await flaky.change();
    const hit = await until(() => rx.on('/ok').find((h) => h.headers['webhook-id'] === id), { what: 'the callback' });
    expect(new Webhook(p.signingSecret).verify(hit.body, webhookHeaders(hit.headers))).toBeTruthy();
    await until(async () => (await ok.statuses())[0] === 'delivered', { what: 'recorded as delivered' });
    await until(async () => (await flaky.statuses())[0] === 'delivered', { what: 'delivered on its second attempt' });
    expect(rx.on('/flaky').map((h) => h.headers['webhook-id'])).toEqual([retried, retried]);
  });

  it('keeps every key of the deployment in one hash slot, on one master', async () => {
    const where = await withRedisOnce(cluster.url, async (redis) => {
      if (!isCluster(redis)) throw new Error('expected a cluster connection');
      const found: { node: string; keys: string[] }[] = [];
      for (const node of redis.nodes('master')) {
        const [, keys] = await node.scan('0', 'MATCH', `${redisNamespace(t.config.queuePrefix)}:*`, 'COUNT', 10_000);
        if (keys.length) found.push({ node: `${node.options.host}:${node.options.port}`, keys });
      }
      const slots = new Set(await Promise.all(found.flatMap((f) => f.keys).map((k) => redis.cluster('KEYSLOT', k))));
      return { found, slots };
    });
    expect(where.found).toHaveLength(1);
    expect(where.found[0].keys.some((k) => k.includes(':callbacks:'))).toBe(true);
    expect(where.slots.size).toBe(1);
  });

  it('rate-limits a partner through the cluster', async () => {
    const busy = await createPartner(t, 'Busy');
    const c = (await t.as(busy.apiKey, 'post', '/v1/companies', { name: 'X' }).expect(201)).body.id;
    const results = await Promise.all(
      Array.from({ length: 20 }, () => t.as(busy.apiKey, 'get', `/v1/companies/${c}/status`)),
    );
    // 20 at once fall into at most two one-second windows of 5.
    expect(results.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(10);
  });
});
