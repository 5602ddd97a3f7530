import { Client } from 'pg';
import { loadConfig } from '../src/platform/config/app-config.js';
import { sessionWithDeadline } from '../src/platform/database/sql-session.js';
import { AdmissionStore } from '../src/callbacks/store/admission-store.js';
import { Admission } from '../src/delivery/admission.js';
import { RELAY_TIMEOUT_MS } from '../src/delivery/relay-connection.js';
import { metricsOn } from './support/metrics.js';
import { ScratchDatabase, seedCompany } from './support/scratch-database.js';
import {
  closeRelayScratch,
  liveWorkerAndStatistics,
  openRelayScratch,
  recordingQueue,
} from './support/relay-scratch.js';
import { ADMIN_TOKEN } from './support/run-identity.js';

/**
 * What one admission pass reads, whatever waits behind open circuits: the real Admission runs its
 * passes on the relay's connection, each pass in a transaction of its own so that PostgreSQL's
 * counters for that transaction (pg_stat_get_xact_tuples_returned: the entries each index of
 * `callbacks` returned, dead ones included, and the rows read by sequential scans) count exactly
 * what its statements read. Counted, never timed.
 */
const OPEN = 200;
const WAITING = 50;
const HEALTHY = 10;
const BACKLOG = 60;
const WINDOW = 5;
const PROBING = 5;
/**
 * Per pass: a callback admitted is read twice then (its entry by the pick, its row by primary
 * key) and twice in the next pass (its dead entries, pending and sending, each once before they
 * are marked dead); a destination with room costs its oldest due entry.
 */
const PER_ADMITTED = 2;
const PER_DESTINATION = 2;

describe('an admission pass costs O(destinations with room) + O(callbacks admitted)', () => {
  let s: ScratchDatabase;
  let relay: Client;

  beforeAll(async () => {
    ({ s, relay } = await openRelayScratch());
    const { partnerId, companyId } = await seedCompany(s.pool);
    // Each group recorded by one statement, as a bulk load or an outage's backlog: one due time per destination.
    const record = (prefix: string, destinations: number, each: number) =>
      s.pool.query(
        `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
         SELECT $1, $2, 0, 'https://' || $3 || ((g - 1) / $5) || '.test/cb', '{}', 'pending', now() - interval '1 minute'
           FROM generate_series(1, $4::int * $5::int) g`,
        [partnerId, companyId, prefix, destinations, each],
      );
    await record('open', OPEN, WAITING);
    await record('probing', PROBING, WAITING);
    await record('healthy', HEALTHY, BACKLOG);
    await s.pool.query(
      `UPDATE destinations SET failures = 5, opened_at = now() - interval '1 minute', next_probe_at = now() + interval '1 hour', probe_ms = 300000 WHERE origin LIKE 'https://open%'`,
    );
    await s.pool.query(
      `UPDATE destinations SET failures = 5, opened_at = now() - interval '1 minute', next_probe_at = now() - interval '1 second', probe_ms = 5000 WHERE origin LIKE 'https://probing%'`,
    );
    await s.pool.query(
      `UPDATE destinations SET window_size = $1, last_ok_at = now() WHERE origin LIKE 'https://healthy%'`,
      [WINDOW],
    );
    await liveWorkerAndStatistics(s, 200);
  }, 60_000);

  afterAll(() => closeRelayScratch(s, relay));

  /**
   * Entries the indexes of `callbacks` returned and rows its sequential scans read, so far, as this
   * connection counts them (its counts since it last reported them; it reports only between transactions).
   */
  const readSoFar = async () => {
    const { rows } = await relay.query<{ read: string }>(
      `SELECT sum(pg_stat_get_xact_tuples_returned(oid))::text AS read FROM pg_class
        WHERE oid = 'callbacks'::regclass OR oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'callbacks'::regclass)`,
    );
    return Number(rows[0].read);
  };

  /** One pass in a transaction of its own: what it admitted, and what its statements read from `callbacks`. */
  async function countedPass(admission: Admission, admitted: string[]): Promise<{ admitted: number; read: number }> {
    admitted.length = 0;
    await relay.query('BEGIN');
    const before = await readSoFar();
    await admission.admit(sessionWithDeadline(relay, RELAY_TIMEOUT_MS));
    const read = (await readSoFar()) - before;
    await relay.query('COMMIT');
    return { admitted: admitted.length, read };
  }

  it('reads no more than a few entries per callback admitted and per destination with room, however many wait behind open circuits', async () => {
    const admitted: string[] = [];
    const queue = recordingQueue(admitted);
    const admission = new Admission(loadConfig({ ADMIN_TOKEN }), queue, metricsOn(s.db, s.sql), new AdmissionStore());
    const passes: { admitted: number; read: number; bound: number }[] = [];
    let before = 0;
    for (let i = 0; i < BACKLOG / WINDOW + 2; i++) {
      const pass = await countedPass(admission, admitted);
      passes.push({ ...pass, bound: PER_ADMITTED * (pass.admitted + before) + PER_DESTINATION * (HEALTHY + PROBING) });
      before = pass.admitted;
      // Their workers answered: delivered (the probes too; their destinations stay open, their next probe due).
      await s.pool.query(
        `UPDATE callbacks SET status = 'delivered', next_attempt_at = NULL, lease_until = NULL, delivered_at = now() WHERE id = ANY($1::uuid[])`,
        [admitted],
      );
    }
    const delivered = await s.pool.query(
      `SELECT count(*)::int AS n FROM callbacks WHERE status = 'delivered' AND url LIKE 'https://healthy%'`,
    );
    expect(delivered.rows[0].n).toBe(HEALTHY * BACKLOG);
    expect(passes.filter((p) => p.read > p.bound)).toEqual([]);
  });
});

/**
 * A thousand backlogs recovering at once: a pass reads the heads of only as many destinations
 * catching up as there are slots (src/delivery/catch-up.ts), each in turn, and every other
 * destination's, however many catch up. Counted, never timed.
 */
describe('a pass reads the heads of as many destinations catching up as there are slots, in turn', () => {
  const CATCHING_UP = 100;
  const SLOTS = 10;
  let s: ScratchDatabase;
  let relay: Client;
  let company: { partnerId: string; companyId: string };

  beforeAll(async () => {
    ({ s, relay } = await openRelayScratch());
    company = await seedCompany(s.pool);
    await s.pool.query(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at)
       SELECT $1, $2, 0, 'https://behind' || ((g - 1) / 20) || '.test/cb', '{}', 'pending', now() - interval '1 minute'
         FROM generate_series(1, $3::int * 20) g`,
      [company.partnerId, company.companyId, CATCHING_UP],
    );
    await s.pool.query(`UPDATE destinations SET window_size = 2, last_ok_at = now()`);
    await liveWorkerAndStatistics(s, SLOTS);
  }, 60_000);

  afterAll(() => closeRelayScratch(s, relay));

  /** Entries `callbacks_admission_idx` returned so far in this connection's transaction. */
  const admissionEntries = async () =>
    Number(
      (
        await relay.query<{ n: string }>(
          `SELECT pg_stat_get_xact_tuples_returned('callbacks_admission_idx'::regclass)::text AS n`,
        )
      ).rows[0].n,
    );

  it('admits a fresh callback at once beside them, and each of them within a turn of passes, a sweep between', async () => {
    const admitted: string[] = [];
    const queue = recordingQueue(admitted);
    const admission = new Admission(loadConfig({ ADMIN_TOKEN }), queue, metricsOn(s.db, s.sql), new AdmissionStore());
    const session = sessionWithDeadline(relay, RELAY_TIMEOUT_MS);
    const destinationsOf = async (ids: string[]) =>
      (await s.pool.query<{ url: string }>(`SELECT url FROM callbacks WHERE id = ANY($1::uuid[])`, [ids])).rows.map(
        (r) => new URL(r.url).host,
      );
    /** One pass in a transaction of its own; what it admitted (then delivered, freeing the slots) and the entries it read. */
    const counted = async () => {
      admitted.length = 0;
      await relay.query('BEGIN');
      const before = await admissionEntries();
      await admission.admit(session);
      const read = (await admissionEntries()) - before;
      await relay.query('COMMIT');
      const hosts = await destinationsOf(admitted);
      await s.pool.query(
        `UPDATE callbacks SET status = 'delivered', next_attempt_at = NULL, lease_until = NULL, delivered_at = now() WHERE id = ANY($1::uuid[])`,
        [admitted],
      );
      return { hosts, read };
    };
    // The first pass knows none of them: it reads every head.
    const first = await counted();
    expect(first.read).toBeGreaterThanOrEqual(CATCHING_UP);
    expect(first.hosts).toHaveLength(SLOTS);
    const served = new Set(first.hosts);
    await s.pool.query(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at) VALUES ($1, $2, 0, 'https://fresh.test/cb', '{}', 'pending', now())`,
      [company.partnerId, company.companyId],
    );
    const second = await counted();
    expect(second.hosts).toContain('fresh.test');
    // Their heads, a few entries each (a floor's dead entries among them), and the fresh one's: not a hundred.
    expect(second.read).toBeLessThanOrEqual(3 * SLOTS + 3);
    second.hosts.forEach((h) => served.add(h));
    // The pass after a sweep forgets every floor: those left unread meanwhile start from their heads when read, not idle.
    await admission.sweep(session);
    // Each of them within ⌈100 / 10⌉ passes more.
    for (let i = 0; i < CATCHING_UP / SLOTS; i++) {
      const pass = await counted();
      expect(pass.read).toBeLessThanOrEqual(3 * SLOTS);
      pass.hosts.forEach((h) => served.add(h));
    }
    expect([...served].filter((h) => h.startsWith('behind'))).toHaveLength(CATCHING_UP);
  });
});

/**
 * Thousands of unproven destinations, each with a callback in flight (room for one more) to a
 * receiver that does not answer and a backlog due behind it (issue 57): a pass reads as many of
 * them as there are slots, and the statement returns a row for those alone, what all have in
 * flight summed by class on it; the budget still counts every one of those callbacks (none
 * admitted: the waiting places are full). Counted, never timed.
 */
describe('a pass returns rows only for the destinations it reads with a callback due', () => {
  const DEAD = 2000;
  const SLOTS = 20;
  let s: ScratchDatabase;
  let relay: Client;

  beforeAll(async () => {
    ({ s, relay } = await openRelayScratch());
    const { partnerId, companyId } = await seedCompany(s.pool);
    await s.pool.query(
      `INSERT INTO callbacks (partner_id, company_id, message, url, body, status, next_attempt_at, lease_until)
       SELECT $1, $2, 0, 'https://dead' || ((g - 1) / 5) || '.test/cb', '{}',
              CASE WHEN g % 5 = 0 THEN 'sending' ELSE 'pending' END, now() - interval '1 minute',
              CASE WHEN g % 5 = 0 THEN now() + interval '10 seconds' END
         FROM generate_series(1, $3::int * 5) g`,
      [partnerId, companyId, DEAD],
    );
    await liveWorkerAndStatistics(s, SLOTS);
  }, 60_000);

  afterAll(() => closeRelayScratch(s, relay));

  it('reads every head once, then as many as there are slots; admits none while the places are full', async () => {
    const admitted: string[] = [];
    const queue = recordingQueue(admitted);
    const store = new AdmissionStore();
    const returned: number[] = [];
    const candidates = store.candidates.bind(store);
    store.candidates = async (...args: Parameters<AdmissionStore['candidates']>) => {
      const rows = await candidates(...args);
      returned.push(rows.length);
      return rows;
    };
    const admission = new Admission(loadConfig({ ADMIN_TOKEN }), queue, metricsOn(s.db, s.sql), store);
    const session = sessionWithDeadline(relay, RELAY_TIMEOUT_MS);
    for (let i = 0; i < 3; i++) await admission.admit(session);
    expect(returned[0]).toBe(DEAD);
    expect(returned.slice(1)).toEqual([SLOTS, SLOTS]);
    expect(admitted).toEqual([]);
  });
});
