import { ChildProcess } from 'node:child_process';
import http from 'node:http';
import { LEASE_MARGIN_MS } from '../src/delivery/admission.js';
import { PATIENCE_MS } from '../src/delivery/delivery-slots.js';
import type { DestinationView } from '../src/delivery/destinations/destinations.service.js';
import { buildService, startService, stop, workerEnv } from './support/processes.js';
import { Receiver } from './support/receiver.js';
import { companyWithCallback, harness, TestApp, until } from './support/harness.js';

/** Dead receivers: each accepts and never answers; their requests are let go at the end. */
const DEAD = 20;
const TIMEOUT_MS = 4000;

/**
 * Many new destinations dead at once (docs/architecture.md, invariant 4). A request unanswered
 * after PATIENCE_MS waits in a waiting place (delivery-slots.ts), so their first requests all hang
 * at once; one that never answered opens at its first timeout (destination-window.ts,
 * failuresAfter) instead of CALLBACK_BREAKER_THRESHOLD timeouts in a row; a healthy destination
 * beside them keeps its slots.
 */
describe('twenty new destinations dead at once', () => {
  let t: TestApp;
  let dead: Receiver[] = [];
  const hanging: http.ServerResponse[] = [];
  const e2e = harness({
    CALLBACK_CONCURRENCY: '10',
    CALLBACK_DESTINATION_CONCURRENCY: '3',
    CALLBACK_BREAKER_THRESHOLD: '3',
    CALLBACK_BREAKER_PROBE: '1m..5m',
    CALLBACK_TIMEOUT_MS: String(TIMEOUT_MS),
    CALLBACK_RETRY_SCHEDULE: '1s,1s,1s,1h',
  });

  beforeAll(async () => {
    t = e2e.t;
    dead = await Promise.all(Array.from({ length: DEAD }, () => Receiver.start()));
    for (const rx of dead) rx.answer = (_h, _req, res) => void hanging.push(res);
  });
  afterAll(async () => {
    hanging.splice(0).forEach((res) => res.destroy());
    await Promise.all(dead.map((rx) => rx.close()));
  });

  it('hang together in waiting places: each circuit opens at its first timeout, the healthy destination served meanwhile', async () => {
    // The healthy destination has answered before (proven): it keeps the slots unproven ones cannot take.
    const healthy = await companyWithCallback(t, e2e.p, e2e.rx.url('/fine'));
    await healthy.change();
    await until(() => e2e.rx.hits.length === 1, { what: 'the healthy destination proven' });
    const started = Date.now();
    for (const rx of dead) {
      const company = await companyWithCallback(t, e2e.p, rx.url('/never'));
      for (let i = 0; i < 3; i++) await company.change();
    }
    for (let i = 1; i < 6; i++) {
      const sent = Date.now();
      await healthy.change();
      await until(() => e2e.rx.hits.length === i + 1, { what: `healthy callback ${i + 1}`, timeoutMs: 3000 });
      expect(Date.now() - sent).toBeLessThan(3000);
    }

    const opened = async () =>
      (await t.admin('get', '/admin/v1/destinations?state=open').expect(200)).body.items as DestinationView[];
    await until(async () => (await opened()).length === DEAD, { what: 'every dead circuit open', timeoutMs: 60_000 });
    expect(Date.now() - started).toBeLessThan(6 * TIMEOUT_MS);
    // Each opened one timeout after its first request (three in a row would take three, two at a time two).
    const openedAt = new Map((await opened()).map((d) => [d.origin, Date.parse(d.openedAt!)]));
    for (const rx of dead) {
      const after = openedAt.get(new URL(rx.url('/')).origin)! - rx.hits[0].at;
      expect(after).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
      expect(after).toBeLessThan(1.5 * TIMEOUT_MS);
      // Its window of two, both timing out together; none hammered.
      expect(rx.hits.length).toBeLessThanOrEqual(2);
    }
  });
});

/**
 * A request in a waiting place has left its job (delivery-slots.ts): a worker killed then leaves
 * no job for BullMQ to return. Its lease is what wakes the callback: it lapses (the attempt's
 * timeout and LEASE_MARGIN_MS), the sweep makes it `pending`, and another worker delivers it.
 */
describe('a worker killed while a request waits in a waiting place', () => {
  const timeout = { CALLBACK_TIMEOUT_MS: '2000', CALLBACK_RETRY_SCHEDULE: '1s,1s,1s' };
  const e2e = harness({ ROLE: 'api', ...timeout });
  const workers: ChildProcess[] = [];
  const hanging: http.ServerResponse[] = [];
  beforeAll(() => buildService(), 180_000);
  afterAll(async () => {
    for (const w of workers) await stop(w, 'SIGKILL');
    hanging.splice(0).forEach((res) => res.destroy());
  });
  const worker = async () => {
    const w = await startService({ ...workerEnv(e2e.t), ...timeout, CALLBACK_CONCURRENCY: '4' });
    workers.push(w);
    return w;
  };

  it('is delivered by the next worker once its lease lapses, same webhook-id', async () => {
    let answering = false;
    e2e.rx.answer = (_h, _req, res) => (answering ? res.writeHead(204).end() : void hanging.push(res));
    const first = await worker();
    const company = await companyWithCallback(e2e.t, e2e.p, e2e.rx.url('/waiting'));
    const id = await company.change();
    await until(() => e2e.rx.hits.length === 1, { what: 'the request hanging' });
    await new Promise((r) => setTimeout(r, 4 * PATIENCE_MS)); // past its patience: in a waiting place
    const killedAt = Date.now();
    await stop(first, 'SIGKILL');
    hanging.splice(0).forEach((res) => res.destroy());
    answering = true;
    await worker();
    await until(async () => (await company.statuses())[0] === 'delivered', {
      what: 'the callback delivered after its lease lapsed',
      timeoutMs: 2000 + LEASE_MARGIN_MS + 15_000,
    });
    expect(Date.now() - killedAt).toBeGreaterThan(LEASE_MARGIN_MS - 5000);
    expect(e2e.rx.hits.map((h) => h.headers['webhook-id'])).toEqual([id, id]);
  }, 90_000);
});
