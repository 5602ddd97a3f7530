import { microsKey } from '../../platform/index.js';
import { backToWaiting, EVENT_WRITES, fail, set } from './lifecycle.js';
import { emitEvents, noteFailures } from './operational-events.js';

/**
 * A transaction that records callbacks takes less than this from its start (their due time, its
 * now()) to its commit; one that takes longer may find its callbacks below a destination's floor,
 * and they wait for the pass after the timer's sweep (within a second).
 */
const LATE_COMMIT = `interval '10 seconds'`;
/** A floor's due time (microseconds since the epoch, as microsKey writes them) as a bound; none: from the head. */
const fromMicros = (key: string): string =>
  `coalesce(timestamptz 'epoch' + ${key} * interval '1 microsecond', '-infinity')`;
/** A callback's position in `callbacks_admission_idx`, from a floor on: the order admission takes them in. */
const fromFloor = (at: string, seq: string): string =>
  `(c.next_attempt_at, c.seq) >= (${fromMicros(at)}, coalesce(${seq}, 0))`;

/**
 * The destinations a pass reads that have a callback due, each with its state, in-flight count and
 * oldest due callback, and on every row the live workers' slots and what is in flight everywhere,
 * by class, in one statement. A destination is read if it can take a callback now: a closed one,
 * or an open one whose probe is due or was asked for by a redelivery (circuit-wait.ts, probeReady;
 * roomOf says the rest of it), but the destinations of $5 (those catching up beyond the pass's
 * read-ahead: delivery/catch-up.ts). Only its oldest due callback is read (one index entry from its
 * floor: see AdmissionFloors): the callbacks waiting behind open circuits cost nothing, however
 * many, and a pass costs O(destinations read) + O(callbacks in flight), whatever their backlogs:
 * how many a destination gets is for admissionRounds to find out as it admits them.
 *
 * `flight`: the callbacks in flight of every destination, read or not, summed by class, `proven`
 * and `failing` as destination-window.ts's isProven and isFailing decide them, their one owner:
 * $7 is its PROVEN_FOR_MS (test/admission-classes.e2e-spec.ts checks the two agree). A
 * destination with callbacks in flight and none due to read costs its in-flight count, no row.
 *
 * A destination's due callbacks are read from `callbacks_admission_idx (destination,
 * next_attempt_at, seq)` with an equality on the destination, the only index on the due time
 * admission's conditions can use (the dashboard's is on another expression: see its migration,
 * 1764000100000): with one on `(next_attempt_at)` alone, statistics from a one-destination
 * backlog made walking it, past that whole backlog, look as cheap.
 *
 * Admission starts from `destinations`, not from `callbacks`: a callback whose destination has no
 * row there is never admitted. No code here inserts those rows: the trigger
 * `callbacks_note_destinations` (AFTER INSERT ON callbacks, once per statement, migrations
 * 1764000000000-delivery-core-v2.ts and 1764700000000-partner-destinations.ts) adds the
 * destinations of every statement's new callbacks (`callbacks.destination`, generated from the
 * partner and the SQL function `callback_origin` of the URL: one destination per partner and
 * origin). So any writer of callbacks, this service or a bulk load,
 * has them admitted; test/callback-origin.e2e-spec.ts checks the trigger.
 */
export const CANDIDATES = `
  WITH sending AS (SELECT destination, count(*)::int AS n,
                          count(*) FILTER (WHERE lease_until < now() + $6 * interval '1 millisecond')::int AS w
                     FROM callbacks WHERE status = 'sending' GROUP BY destination),
       flight AS (SELECT coalesce(json_agg(json_build_object('proven', g.proven, 'failing', g.failing,
                                                             'sending', g.n, 'waiting', g.w)), '[]') AS flight
                    FROM (SELECT k.proven, k.failing, sum(s.n)::int AS n, sum(s.w)::int AS w
                            FROM sending s JOIN destinations d ON d.key = s.destination,
                            LATERAL (SELECT (d.opened_at IS NULL AND d.failures = 0 AND
                                               d.last_ok_at > now() - $7 * interval '1 millisecond') IS TRUE AS proven,
                                            (d.opened_at IS NOT NULL OR d.failures > 0) AS failing) k
                           GROUP BY k.proven, k.failing) g)
  SELECT d.key, d.window_size, d.failures, d.probe_ms, d.last_error, d.probe_id,
         (extract(epoch FROM d.opened_at) * 1000)::float8 AS opened_at,
         (extract(epoch FROM d.next_probe_at) * 1000)::float8 AS next_probe_at,
         (extract(epoch FROM d.last_ok_at) * 1000)::float8 AS last_ok_at,
         coalesce(s.n, 0) AS sending, coalesce(s.w, 0) AS waiting,
         (extract(epoch FROM due.at) * 1000)::float8 AS oldest_due,
         (SELECT coalesce(sum(concurrency), 0)::int FROM delivery_workers WHERE expires_at > now()) AS worker_slots,
         (SELECT count(*)::int FROM delivery_workers WHERE expires_at > now()) AS workers,
         (extract(epoch FROM now()) * 1000)::float8 AS now,
         CASE WHEN due.at < now() - ${LATE_COMMIT} THEN ${microsKey('due.at')}
              ELSE ${microsKey(`now() - ${LATE_COMMIT}`)} END AS floor_at,
         CASE WHEN due.at < now() - ${LATE_COMMIT} THEN due.seq::text ELSE '0' END AS floor_seq,
         ${microsKey(`now() - ${LATE_COMMIT}`)} AS idle_floor, fl.flight
    FROM destinations d
    LEFT JOIN unnest($5::text[]) AS skip(key) ON skip.key = d.key
    LEFT JOIN sending s ON s.destination = d.key
    LEFT JOIN unnest($1::text[], $2::bigint[], $3::bigint[]) AS f(key, at, seq) ON f.key = d.key
    CROSS JOIN LATERAL (SELECT c.next_attempt_at AS at, c.seq FROM callbacks c
                        WHERE c.destination = d.key AND c.status = 'pending' AND c.next_attempt_at <= now()
                          AND ${fromFloor(`coalesce(f.at, CASE WHEN d.opened_at IS NULL THEN $4::bigint END)`, 'f.seq')}
                        ORDER BY c.next_attempt_at, c.seq LIMIT 1) due
    CROSS JOIN flight fl
   WHERE skip.key IS NULL AND (d.opened_at IS NULL OR d.next_probe_at <= now() OR d.probe_id IS NOT NULL)`;

/**
 * Moves each destination's oldest due callbacks, as many as planned and as it has, from its floor
 * on, to `sending` with a lease. The picked ids are an array (an InitPlan), so the rows are
 * updated by primary-key probes: a join to them let the generic plan, which cannot know `w.n`,
 * hash the whole table.
 */
export const ADMIT = `
  UPDATE callbacks c SET ${set(EVENT_WRITES.admit('$3'))}
   WHERE c.id = ANY (ARRAY(
           SELECT p.id FROM unnest($1::text[], $2::int[], $4::bigint[], $5::bigint[]) AS w(key, n, at, seq),
             LATERAL (SELECT c.id FROM callbacks c
                       WHERE c.destination = w.key AND c.status = 'pending' AND c.next_attempt_at <= now()
                         AND ${fromFloor('w.at', 'w.seq')}
                       ORDER BY c.next_attempt_at, c.seq LIMIT w.n FOR UPDATE SKIP LOCKED) p))
  RETURNING c.id, c.destination, c.attempt_count, c.created_at, ${microsKey('c.lease_until')} AS lease`;

/**
 * Open destinations' probes that redeliveries asked for ($2: each one's probe_id as CANDIDATES read
 * it, $1 its destination), admitted as ADMIT admits, before a round's ADMIT: each while it still
 * waits at its destination; one that does not leaves its destination to ADMIT's oldest. Each is
 * locked by its primary key alone (a LIMIT keeps the conditions on the row found out of that
 * probe: with them, a plan made on small tables read a partial index of every pending callback),
 * and updated by primary-key probes over the array, as ADMIT's. A statement of its own, run only
 * when a pass read such a request: ADMIT's plans stay as they are.
 */
export const ADMIT_PROBES = `
  UPDATE callbacks c SET ${set(EVENT_WRITES.admit('$3'))}
   WHERE c.id = ANY (ARRAY(
           SELECT x.id FROM unnest($1::text[], $2::uuid[]) AS w(key, probe),
             LATERAL (SELECT c.id, c.destination, c.status FROM callbacks c
                       WHERE c.id = w.probe LIMIT 1 FOR UPDATE SKIP LOCKED) x
            WHERE x.destination = w.key AND x.status = 'pending'))
  RETURNING c.id, c.destination, c.attempt_count, c.created_at, ${microsKey('c.lease_until')} AS lease`;

/**
 * A probe admitted ends the request that asked for it (each destination's probe_id as CANDIDATES
 * read it, $2): a stale id never makes a destination probe again, and a request made since (another
 * id) waits for the probe after. Its own statement, after ADMIT's, holding no callback's lock
 * while it waits for a settlement's on the destination.
 */
export const CLEAR_ASKS = `
  UPDATE destinations d SET probe_id = NULL
    FROM unnest($1::text[], $2::uuid[]) AS a(key, probe)
   WHERE d.key = a.key AND d.probe_id = a.probe`;

/**
 * A callback leaving `sending` takes the URL the partner moved it to meanwhile (store/url-changes.ts):
 * its destination was the old one until now.
 */
export const FOLLOW_MOVE = `url = coalesce(next_url, url), next_url = NULL`;

/**
 * Admitted rows whose jobs Redis refused go back to waiting, as they were, with the URL they were moved to
 * meanwhile.
 */
export const RELEASE = `UPDATE callbacks SET ${backToWaiting('release')}, ${FOLLOW_MOVE}
   WHERE id = ANY($1::uuid[]) AND status = 'sending'`;

/** A lease that ran out: its process died or its job was lost. Back to waiting, no attempt spent, as RELEASE. */
export const LAPSE = `UPDATE callbacks SET ${backToWaiting('lapse')}, ${FOLLOW_MOVE}
   WHERE status = 'sending' AND lease_until < now()`;

/** The destinations whose circuit is open (a small table's scan), for the sweep's expiry. */
export const OPEN_DESTINATIONS = `
  SELECT key, origin, (extract(epoch FROM opened_at) * 1000)::float8 AS opened_at, last_error
    FROM destinations WHERE opened_at IS NOT NULL`;

/**
 * Callbacks of these open destinations whose schedule ended while they waited become `failed`,
 * each with its destination's lastError (settle-attempt.ts, outageError: only while open, so a
 * callback to a closed destination never fails without an attempt), counted into their
 * destination's `callbacks.failed` window (store/operational-events.ts). Updated by primary-key
 * probes over the array of their ids, as ADMIT: joined to the pick, a table of a few thousand
 * rows was scanned whole.
 */
export const EXPIRE = `
  WITH expired AS (
  UPDATE callbacks c SET ${set(fail('o.error'))}
    FROM unnest($2::text[], $3::text[]) AS o(key, error)
   WHERE c.destination = o.key AND c.id = ANY (ARRAY(
           SELECT p.id FROM unnest($2::text[]) AS d(key),
             LATERAL (SELECT id FROM callbacks
                       WHERE destination = d.key AND status = 'pending'
                         AND schedule_started_at < now() - $1 * interval '1 millisecond'
                       ORDER BY schedule_started_at LIMIT 1000 FOR UPDATE SKIP LOCKED) p))
  RETURNING c.id, c.partner_id, c.destination, c.test, c.event_type
  ),${noteFailures(
    'expiry',
    `SELECT partner_id, destination, count(*)::int AS n
       FROM expired WHERE NOT test AND event_type IS NULL
      GROUP BY partner_id, destination`,
  )},${emitEvents('expired', 'SELECT * FROM expiry_emit')}
  SELECT id FROM expired`;
