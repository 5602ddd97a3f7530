import { ChildProcess, spawn } from 'node:child_process';
import v8 from 'node:v8';
import vm from 'node:vm';
import { randomUUID } from 'node:crypto';
import { CallbackRecorder } from '../src/callbacks/index.js';
import { newSigningKey, SecretBox, Writes } from '../src/platform/index.js';
import { harness, TestApp, until } from './support/harness.js';

/**
 * What the service keeps per destination and per partner is bounded (issue 57): 5,000 partners,
 * each a company whose callback URL is an origin of its own, one callback each delivered, cost
 * the heap at most PER_DESTINATION_BYTES each once collected. Keeping a socket, an agent's pool,
 * a signer or a destination's state for each of them costs several times that.
 */
const DESTINATIONS = Number(process.env.MEMORY_TEST_DESTINATIONS ?? 5_000);
const WARM_UP = 50;
/**
 * Measured: about 0.75 KB a destination with the bounded caches; with a socket, a signer and a
 * state kept for each, 6.8 KB.
 */
const PER_DESTINATION_BYTES = 2_048;

/** 127.1.x.y: an origin per destination, every one served by the one listener on the wildcard address. */
const hostOf = (i: number) => `127.1.${(i >> 8) & 255}.${i & 255}`;

/**
 * Answers 204 to every callback and keeps connections alive for a minute, as many receivers do: in
 * a process of its own, so the heap measured is the service's alone.
 */
const RECEIVER = `
  const answer = (req, res) => req.resume().on('end', () => res.writeHead(204).end());
  const server = require('node:http').createServer(answer);
  server.keepAliveTimeout = 60000;
  server.listen(0, '0.0.0.0', () => process.stdout.write(server.address().port + '\\n'));
`;

async function wildcardReceiver(): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
    child.once('exit', (code) => reject(new Error(`the receiver exited (${code})`)));
  });
  return { child, port };
}

/** gc() without --expose-gc: the flag is set at run time and the function taken from a fresh context. */
function collector(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

function heapUsed(gc: () => void): number {
  for (let i = 0; i < 3; i++) gc();
  return v8.getHeapStatistics().used_heap_size;
}

/**
 * Partners `from` to `to` - 1, each with its own signing key (sealed for its row, as the API seals
 * it) and a company whose callback URL is an origin of its own, and one callback each, recorded
 * through the service's own door in one change. Made in bulk: thousands of API requests would
 * take minutes on a busy machine.
 */
async function destinations(t: TestApp, port: number, from: number, to: number): Promise<void> {
  const box = t.app.get(SecretBox);
  const ids = Array.from({ length: to - from }, () => randomUUID());
  const secrets = ids.map((id) => box.seal(newSigningKey('hmac-sha256').stored, 'partners.signing_secret', id));
  await t.sql(
    `INSERT INTO partners (id, name, api_key_hash, signing_secret)
     SELECT id, 'Memory ' || id, md5(id::text), s FROM unnest($1::uuid[], $2::text[]) AS x(id, s)`,
    [ids, secrets],
  );
  const urls = ids.map((_, i) => `http://${hostOf(from + i)}:${port}/cb`);
  const companies = await t.sql<{ id: string; partner_id: string; callback_url: string }>(
    `INSERT INTO companies (partner_id, name, currency, credit_status, callback_url)
     SELECT p, 'C', 'EUR', 'active', u FROM unnest($1::uuid[], $2::text[]) AS x(p, u)
     RETURNING id, partner_id, callback_url`,
    [ids, urls],
  );
  const events = companies.map((c) => ({
    message: 0 as const,
    url: c.callback_url,
    partnerId: c.partner_id,
    ids: { companyId: c.id, withdrawalId: null, limitRequestId: null, loanId: null },
  }));
  await t.app.get(Writes).transaction((m) => t.app.get(CallbackRecorder).record(m, events));
}

const delivered = async (t: TestApp) =>
  (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM callbacks WHERE status = 'delivered'`))[0].n;

describe('memory per destination', () => {
  let rx: Awaited<ReturnType<typeof wildcardReceiver>>;
  beforeAll(async () => (rx = await wildcardReceiver()));
  const e2e = harness({}, { partner: null });
  afterAll(() => rx?.child.kill());

  it(`grows by at most ${PER_DESTINATION_BYTES} bytes of heap per destination`, async () => {
    const { t } = e2e;
    const gc = collector();
    await destinations(t, rx.port, 0, WARM_UP);
    await until(async () => (await delivered(t)) === WARM_UP, { timeoutMs: 30_000, what: 'the warm-up callbacks' });
    const before = { heap: heapUsed(gc), ...process.memoryUsage() };
    const started = Date.now();
    await destinations(t, rx.port, WARM_UP, WARM_UP + DESTINATIONS);
    const made = Date.now();
    await until(async () => (await delivered(t)) === WARM_UP + DESTINATIONS, {
      timeoutMs: 60_000,
      intervalMs: 200,
      what: 'every callback delivered',
    });
    const after = { heap: heapUsed(gc), ...process.memoryUsage() };
    const perDestination = (after.heap - before.heap) / DESTINATIONS;
    // The figures the bound was chosen from (and the ones to compare another change with).
    const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;
    process.stdout.write(
      `destination memory: ${DESTINATIONS} made in ${made - started} ms, delivered ${Date.now() - made} ms later; ` +
        `heap ${mb(before.heap)} → ${mb(after.heap)} (${perDestination.toFixed(0)} B each), ` +
        `heap committed ${mb(before.heapTotal)} → ${mb(after.heapTotal)}, RSS ${mb(before.rss)} → ${mb(after.rss)}, ` +
        `outside the heap ${mb(before.external)} → ${mb(after.external)}\n`,
    );
    expect(perDestination).toBeLessThanOrEqual(PER_DESTINATION_BYTES);
  }, 180_000);
});
