import http from 'node:http';
import type { DestinationView } from '../src/delivery/destinations/destinations.service.js';
import { Receiver } from './support/receiver.js';
import { companyWithCallback, harness, TestApp, until } from './support/harness.js';

/** Dead receivers: each accepts and never answers; their requests are let go at the end. */
const DEAD = 20;
const TIMEOUT_MS = 4000;

/**
 * Many new destinations dead at once (docs/architecture.md, invariant 4): each takes
 * CALLBACK_BREAKER_THRESHOLD attempts of a whole timeout to open its circuit. In slots alone (5 of
 * 10 for unproven destinations, 2 for failing ones) their 60 attempts of 4 s take over a minute; a
 * request unanswered after PATIENCE_MS waits in a waiting place instead (delivery-slots.ts), so
 * they all hang at once and every circuit opens within about two timeouts, while a healthy
 * destination beside them keeps its slots.
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

  it('hang together in waiting places: every circuit opens within two timeouts, the healthy destination served meanwhile', async () => {
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
      ((await t.admin('get', '/admin/v1/destinations?state=open').expect(200)).body.items as DestinationView[]).length;
    await until(async () => (await opened()) === DEAD, { what: 'every dead circuit open', timeoutMs: 60_000 });
    const took = Date.now() - started;
    // In slots alone: 40 unproven attempts 5 at a time and 20 failing ones 2 at a time, 4 s each (over 70 s).
    expect(took).toBeLessThan(6 * TIMEOUT_MS);
    // Each opened on its own attempts: the window of two, then one; none hammered.
    for (const rx of dead) expect(rx.hits.length).toBeLessThanOrEqual(3);
  });
});
