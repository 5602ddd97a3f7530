// Per-destination admission and circuit breaking, shared by every relay and worker through Redis.
// The rules live in the Lua scripts below, so each decision is atomic across processes.
import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config.js';
import { createRedis, redisNamespace, RedisConnection } from '../database/redis.js';

export type DestinationState = 'closed' | 'open' | 'half_open';

/**
 * What admission says for one callback: `ok` (it holds one of the destination's in-flight slots),
 * `probe` (the destination's circuit is open and this callback is its one probe), `queued` (a
 * fresh callback goes to the queue without a slot: its worker asks for one when it starts),
 * `full` (no slot free) or `open` (the circuit is
 * open and a probe is not due or already under way). The last two mean: park it, it waits in
 * PostgreSQL.
 */
export type Admission = 'ok' | 'probe' | 'queued' | 'full' | 'open';

/**
 * Who asks: `queue` (the relay, for freshly claimed callbacks) or `hand-off` (callbacks resumed
 * from parking): while the destination is healthy, i.e. answered 2xx in the last 30 s with no
 * failure since, each is queued without a slot (fresh ones at a priority, resumed ones at most
 * `cap` at a time), and so are the first UNPROVEN fresh ones of a destination with no failure on
 * record (new, or idle for a while); otherwise each needs a slot, reserved for it, and parks
 * without one. `start`: a worker about to send takes a slot, or keeps the one reserved for it.
 */
export type AdmitMode = 'queue' | 'hand-off' | 'start';

export interface Admitted {
  admission: Admission;
  /**
   * BullMQ priority of a `queued` job: 0 for the first `concurrency` callbacks of a destination
   * in the queue, then 1, 2… for each further batch of that many. Workers take unprioritised jobs
   * first, so a destination's large backlog waits behind other destinations' fresh callbacks
   * instead of in front of them.
   */
  priority: number;
  /** Callbacks parked for the destination, as counted in Redis (a hint). */
  waiting: number;
  /** The destination answered 2xx in the last 30 s with no failure since (see AdmitMode). */
  healthy: boolean;
}

/**
 * One callback asking admission: `lease` is what the slot it takes is named in Redis, its own id
 * (the default) or a worker's credit (see CallbackDelivery): a slot the worker may reuse for its
 * next callbacks of the same destination and partner while they are answered 2xx.
 */
export interface AdmitItem {
  origin: string;
  id: string;
  lease?: string;
}

/**
 * How an attempt counts for the breaker: `fail` (timeout, network error, 5xx, 429) counts
 * towards opening; `ok` (2xx) closes and resets; `answered` (another answer: the destination is
 * up, the request was not accepted) resets the count but does not close an open circuit; `none`
 * (no request went out) only frees the slot.
 */
export type BreakerResult = 'ok' | 'fail' | 'answered' | 'none';

/**
 * What a settlement item says: a breaker result for the lease's attempt (which frees the lease),
 * or a worker's `report` of 2xx answered on credits it reused (`at`: the last one's time, 0 for
 * none; `started`: callbacks started on them; frees `id` if given), or `renew` (extends the lease
 * `id` if it still exists; `handed` tells whether it did).
 */
export type SettleResult = BreakerResult | 'report' | 'renew';

export type Transition = 'opened' | 'closed' | 'reopened';

export interface SettleItem {
  origin: string;
  /** The lease (see AdmitItem). */
  id: string;
  result: SettleResult;
  error: string | null;
  /** When the answer came (default: now). */
  at?: number;
  /** A report's callbacks started on reused credits. */
  started?: number;
  /** A callback waiting in this process for a slot of the same destination, to be given this one. */
  next?: { id: string; uncounted: boolean };
}

export interface Settled {
  transition: Transition | null;
  /** Whether the freed slot went to the settlement's `next` callback (it now holds it). */
  handed: boolean;
  /**
   * How many parked callbacks may go to the queue now (0 while the circuit is not closed): its
   * free slots, or for a healthy destination its free places among the `cap` resumed callbacks
   * queued without a slot.
   */
  free: number;
  /** Callbacks parked for this destination, as counted in Redis (a hint; PostgreSQL decides). */
  waiting: number;
  /** The destination's state after this settlement (null for a renewal). */
  state: DestinationState | null;
}

export interface DestinationSnapshot {
  origin: string;
  state: DestinationState;
  consecutiveFailures: number;
  openedAt: Date | null;
  nextProbeAt: Date | null;
  lastError: string | null;
  waiting: number;
  inFlight: number;
  /** Leases holding a slot (at most the destination's concurrency): callback ids, or credits (see creditOf). */
  leases: string[];
  /** How many parked callbacks may go to the queue now (see Settled.free). */
  room: number;
}

/**
 * A worker's credit is named `<partner id>/<worker token>.<n>`: the partner whose callbacks it
 * carries (it is reused only for them), so a partner's view counts its own in-flight requests.
 */
export const creditLease = (partnerId: string, name: string): string => `${partnerId}/${name}`;

/** The partner a lease is a credit of, or null for a lease named by its callback's id. */
export const creditOf = (lease: string): string | null => {
  const slash = lease.indexOf('/');
  return slash < 0 ? null : lease.slice(0, slash);
};

/*
 * Keys, all under the deployment's hash tag (one cluster slot): P = `{prefix}:dst:`
 *   P..'s:'..origin  hash: state (absent = closed), failures, failAt (the last failure's answer), openedAt,
 *                    nextProbeAt, probeMs, lastError, probeId,
 *                    okAt (last 2xx while no failure followed; the hash then expires after a minute)
 *   P..'l:'..origin  sorted set: leases holding a slot (callback ids, or workers' credits), scored by
 *                    expiry (a crashed process's slots come back by themselves)
 *   P..'open'        sorted set: open destinations by next probe time
 *   P..'waiting'     hash: origin → callbacks parked in PostgreSQL
 *   P..'queued'      hash: origin → fresh callbacks queued and not yet started (a hint: it only
 *                    sets the priority of the next ones)
 *   P..'r:'..origin  sorted set: parked callbacks of a healthy destination resumed into the queue
 *                    without a slot and not started yet, scored by expiry (a vanished job's place
 *                    comes back by itself): at most `cap` of them at a time
 */
/** How long a 2xx with no failure since keeps a destination healthy. */
export const HEALTHY_MS = 30_000;
const RESUMED_MS = 60_000;
/**
 * A destination with no failure on record but no recent 2xx (new, or idle for a while) has up to
 * this many fresh callbacks queued without a slot, as if healthy, until its first 2xx (which
 * makes it healthy) or failure: a new destination's first batches then skip the park-and-resume
 * round trip, and a new destination that is dead costs at most this many queue round trips before
 * its backlog parks. Two relay batches: what the relay claims before a worker's first 2xx is in.
 * A 2xx clears the count; otherwise it is forgotten UNPROVEN_MS after the last callback it counted.
 */
const UNPROVEN = 2000;
const UNPROVEN_MS = 10 * 60_000;
/** A 2xx within this long of the last one noted on a clean closed destination writes nothing. */
const OK_NOTED_MS = 1000;

/*
 * Both scripts below meet a destination once per call (a batch holds many of its callbacks): its
 * expired slots are dropped and its slots counted then, kept up to date in the call, and its
 * \`queued\` count is changed once, at the end, by what the call queued and started. \`started\`:
 * a callback queued without a slot starts (one fewer resumed, or else one fewer fresh, in front
 * of the destination's next ones).
 */
const KNOWN = `
local known = {}
-- A destination as this call knows it: met once (expired slots dropped, slots counted).
local function meet(P, now, origin)
  local d = known[origin]
  if not d then
    local l = P .. 'l:' .. origin
    redis.call('ZREMRANGEBYSCORE', l, '-inf', now)
    d = { n = redis.call('ZCARD', l), dq = 0 }
    known[origin] = d
  end
  return d
end
local function started(P, d, origin, id)
  if redis.call('ZREM', P .. 'r:' .. origin, id) == 0 then d.dq = d.dq - 1 end
end
local function finish(P)
  for origin, d in pairs(known) do
    if d.dq ~= 0 and redis.call('HINCRBY', P .. 'queued', origin, d.dq) <= 0 then
      redis.call('HDEL', P .. 'queued', origin)
    end
  end
end
`;

const ADMIT = `${KNOWN}
local P, now, cap, leaseMs, mode = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
local MAX_PRIORITY = 2097151
local HEALTHY_MS, RESUMED_MS, UNPROVEN, UNPROVEN_MS = ${HEALTHY_MS}, ${RESUMED_MS}, ${UNPROVEN}, ${UNPROVEN_MS}
-- Also its state, last 2xx (healthy: within HEALTHY_MS), failures, trusted count and parked count, read
-- once (only a probe taken in this call changes the state; a probe's destination is not closed).
local function of(origin)
  local d = meet(P, now, origin)
  if not d.state then
    local h = redis.call('HMGET', P .. 's:' .. origin, 'state', 'okAt', 'failures', 'unproven')
    d.state, d.okAt = h[1] or 'closed', tonumber(h[2] or '0')
    d.healthy = d.okAt > now - HEALTHY_MS
    d.clean, d.unproven, d.du = not h[3], tonumber(h[4] or '0'), 0
    d.waiting = tonumber(redis.call('HGET', P .. 'waiting', origin) or '0')
  end
  return d
end
local out = {}
-- Each item: origin, the lease to take (the callback id, or a worker's credit), the callback id.
for i = 6, #ARGV, 3 do
  local origin, id, cb = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local s, l = P .. 's:' .. origin, P .. 'l:' .. origin
  local d = of(origin)
  local code, priority = nil, 0
  if redis.call('ZSCORE', l, id) then
    redis.call('ZADD', l, now + leaseMs, id)
    local probing = d.state == 'half_open' and redis.call('HGET', s, 'probeId') == id
    if probing then redis.call('ZADD', P .. 'open', now + leaseMs, origin) end
    code = probing and 'probe' or 'ok'
  else
    if mode == 'start' then started(P, d, origin, cb) end
    if d.state == 'open' or d.state == 'half_open' then
      local probeId = redis.call('HGET', s, 'probeId')
      local probing = probeId and redis.call('ZSCORE', l, probeId)
      if (not probing) and tonumber(redis.call('HGET', s, 'nextProbeAt') or '0') <= now then
        redis.call('HSET', s, 'state', 'half_open', 'probeId', id)
        d.state = 'half_open'
        d.n = d.n + redis.call('ZADD', l, now + leaseMs, id)
        -- Not due again while this probe is out (its settlement sets the next time; if its holder
        -- dies, the lease runs out and the destination comes due again).
        redis.call('ZADD', P .. 'open', now + leaseMs, origin)
        code = 'probe'
      else
        code = 'open'
      end
    elseif mode ~= 'start' and (d.healthy or (mode == 'queue' and d.clean and d.unproven + d.du < UNPROVEN)) then
      -- It answered 2xx lately and has not failed since, or (a fresh callback) it has no failure on
      -- record and fewer than UNPROVEN callbacks were queued so since its last 2xx: queued without
      -- a slot (its worker takes one).
      code = 'queued'
      if not d.healthy then d.du = d.du + 1 end
      if mode == 'queue' then
        if d.q == nil then d.q = tonumber(redis.call('HGET', P .. 'queued', origin) or '0') end
        d.dq = d.dq + 1
        priority = math.min(math.floor((d.q + d.dq - 1) / cap), MAX_PRIORITY)
      else
        -- Resumed from parking: not behind the fresh backlog (it is older), one of at most cap.
        redis.call('ZADD', P .. 'r:' .. origin, now + RESUMED_MS, cb)
      end
    elseif d.n < cap then
      d.n = d.n + redis.call('ZADD', l, now + leaseMs, id)
      code = 'ok'
    else
      code = 'full'
    end
  end
  out[#out + 1] = { code, priority, d.waiting, d.healthy and 1 or 0 }
end
for origin, d in pairs(known) do
  if d.du > 0 then
    local s = P .. 's:' .. origin
    redis.call('HINCRBY', s, 'unproven', d.du)
    redis.call('PEXPIRE', s, UNPROVEN_MS)
  end
end
finish(P)
return out
`;

const SETTLE = `${KNOWN}
local P, now, cap, threshold, first, last, leaseMs = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local HEALTHY_MS, OK_NOTED_MS = ${HEALTHY_MS}, ${OK_NOTED_MS}
-- Also its parked count, read once.
local function of(origin)
  local d = meet(P, now, origin)
  if not d.waiting then d.waiting = tonumber(redis.call('HGET', P .. 'waiting', origin) or '0') end
  return d
end
local out = {}
-- Each item: origin, lease, result, error, the lease of a callback waiting for the slot, whether
-- that one never asked admission, when the answer came, and (a report) callbacks started on credits.
for i = 8, #ARGV, 8 do
  local origin, id, result, err, nextId, uncounted, at, n = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5], tonumber(ARGV[i + 6]), tonumber(ARGV[i + 7])
  local s, l = P .. 's:' .. origin, P .. 'l:' .. origin
  local d = of(origin)
  if result == 'renew' then
    -- A worker's credit still in use: its lease is extended, if it still has one.
    local held = redis.call('ZSCORE', l, id) and 1 or 0
    if held == 1 then redis.call('ZADD', l, now + leaseMs, id) end
    out[#out + 1] = { '', 0, d.waiting, held, '' }
  else
    d.n = d.n - redis.call('ZREM', l, id)
    local h = redis.call('HMGET', s, 'state', 'probeId', 'failures', 'lastError', 'okAt', 'failAt')
    local state = h[1] or 'closed'
    local okAt = tonumber(h[5] or '0')
    local transition = ''
    local isProbe = state == 'half_open' and h[2] == id
    if result == 'report' then
      -- A worker's 2xx on credits it reused (at: the last one's time; 0: none) and how many
      -- callbacks started on them.
      d.dq = d.dq - n
      result = at > 0 and 'ok' or 'none'
    end
    if result == 'ok' and not isProbe and at < tonumber(h[6] or '0') then
      -- Answered before a failure already counted (a worker reports 2xx in bulk, a request may
      -- settle after a later one): the failures since stand. A probe's 2xx always counts.
      result = 'none'
    end
    if result == 'ok' then
      -- Any 2xx shows the destination works again: close (a no-op when closed). Noted as healthy
      -- (its fresh callbacks are queued without a slot) until a failure or a minute without a 2xx.
      -- Closed with nothing else noted and a 2xx noted within the last second: nothing to write.
      if state ~= 'closed' or h[3] or h[4] or okAt <= at - OK_NOTED_MS then
        redis.call('DEL', s)
        redis.call('HSET', s, 'okAt', at)
        redis.call('PEXPIRE', s, 60000)
        redis.call('ZREM', P .. 'open', origin)
        okAt = at
      end
      if state ~= 'closed' then transition = 'closed' end
      state = 'closed'
    elseif isProbe and result ~= 'none' then
      local ms = math.min(tonumber(redis.call('HGET', s, 'probeMs') or first) * 2, last)
      redis.call('HSET', s, 'state', 'open', 'probeMs', ms, 'nextProbeAt', now + ms, 'lastError', err)
      redis.call('HDEL', s, 'probeId')
      if result == 'fail' then redis.call('HINCRBY', s, 'failures', 1) end
      redis.call('ZADD', P .. 'open', now + ms, origin)
      transition = 'reopened'
      state = 'open'
    elseif result == 'fail' then
      redis.call('PERSIST', s)
      redis.call('HDEL', s, 'okAt')
      okAt = 0
      local f = redis.call('HINCRBY', s, 'failures', 1)
      redis.call('HSET', s, 'lastError', err, 'failAt', math.max(at, tonumber(h[6] or '0')))
      if state == 'closed' and f >= threshold then
        redis.call('HSET', s, 'state', 'open', 'openedAt', now, 'probeMs', first, 'nextProbeAt', now + first)
        redis.call('ZADD', P .. 'open', now + first, origin)
        transition = 'opened'
        state = 'open'
      end
    elseif result == 'answered' and state == 'closed' then
      redis.call('HDEL', s, 'failures')
    elseif isProbe then
      -- The probe went nowhere (its request was never made): another may go at once.
      redis.call('HSET', s, 'state', 'open')
      redis.call('HDEL', s, 'probeId')
      redis.call('ZADD', P .. 'open', tonumber(redis.call('HGET', s, 'nextProbeAt') or now), origin)
    end
    local handed = 0
    if state == 'closed' and nextId ~= '' and d.n < cap then
      -- The freed slot goes straight to a callback of the same destination waiting in this
      -- worker process (a start, as in ADMIT: one fewer queued when it did not ask before).
      d.n = d.n + redis.call('ZADD', l, now + leaseMs, nextId)
      handed = 1
      if uncounted == '1' then started(P, d, origin, nextId) end
    end
    out[#out + 1] = { transition, 0, d.waiting, handed, state }
    d.last, d.closed, d.healthy = #out, state == 'closed', okAt > now - HEALTHY_MS
  end
end
-- Room is reported once per destination, by its last settlement in the call: the state after all
-- of them (three timeouts in one call may open the circuit with the third).
for origin, d in pairs(known) do
  if d.closed then
    if d.healthy then
      -- Healthy: parked callbacks go back to the queue without a slot, up to cap of them at a time.
      local r = P .. 'r:' .. origin
      redis.call('ZREMRANGEBYSCORE', r, '-inf', now)
      out[d.last][2] = math.max(0, cap - redis.call('ZCARD', r))
    else
      out[d.last][2] = math.max(0, cap - d.n)
    end
  end
end
finish(P)
return out
`;

/** Adds (or with a negative count removes) parked callbacks to each destination's count. */
const COUNT_WAITING = `
local P = ARGV[1]
for i = 2, #ARGV, 2 do
  local n = redis.call('HINCRBY', P .. 'waiting', ARGV[i], tonumber(ARGV[i + 1]))
  if n <= 0 then redis.call('HDEL', P .. 'waiting', ARGV[i]) end
end
return 1
`;

/** An operator's "probe now": moves an open destination's next probe to now; returns its state. */
const PROBE_NOW = `
local P, origin, now = ARGV[1], ARGV[2], tonumber(ARGV[3])
local s = P .. 's:' .. origin
local state = redis.call('HGET', s, 'state')
if state == 'open' then
  redis.call('HSET', s, 'nextProbeAt', now)
  redis.call('ZADD', P .. 'open', now, origin)
end
return state or 'closed'
`;

type Scripted = RedisConnection & {
  destinationAdmit(key: string, ...args: (string | number)[]): Promise<[Admission, number, number, number][]>;
  destinationSettle(key: string, ...args: (string | number)[]): Promise<[string, number, number, number, string][]>;
  destinationCountWaiting(key: string, ...args: (string | number)[]): Promise<number>;
  destinationProbeNow(key: string, ...args: (string | number)[]): Promise<string>;
};

@Injectable()
export class DestinationGate implements OnModuleDestroy {
  private readonly redis: Scripted;
  /** Key prefix of every destination key. */
  private readonly p: string;
  /** KEYS[1] of every script: any key of the deployment's slot, so a cluster routes the script there. */
  private readonly routingKey: string;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.redis = createRedis(config.redisUrl, `${config.queuePrefix}-destinations`, true) as Scripted;
    this.p = `${redisNamespace(config.queuePrefix)}:dst:`;
    this.routingKey = `${this.p}open`;
    this.redis.defineCommand('destinationAdmit', { numberOfKeys: 1, lua: ADMIT });
    this.redis.defineCommand('destinationSettle', { numberOfKeys: 1, lua: SETTLE });
    this.redis.defineCommand('destinationCountWaiting', { numberOfKeys: 1, lua: COUNT_WAITING });
    this.redis.defineCommand('destinationProbeNow', { numberOfKeys: 1, lua: PROBE_NOW });
  }

  /**
   * Admits each callback (see AdmitMode); `leaseMs` bounds how long a slot outlives a lost
   * holder.
   */
  async admit(mode: AdmitMode, items: AdmitItem[], leaseMs: number): Promise<Admitted[]> {
    if (items.length === 0) return [];
    const args = items.flatMap((i) => [i.origin, i.lease ?? i.id, i.id]);
    const rows = await this.redis.destinationAdmit(this.routingKey, this.p, Date.now(), this.config.callbackDestinationConcurrency, leaseMs, mode, ...args);
    return rows.map(([admission, priority, waiting, healthy]) => ({
      admission,
      priority: Number(priority),
      waiting: Number(waiting),
      healthy: Number(healthy) === 1,
    }));
  }

  /** Forgets the queued counts (when the queue holds no waiting job, they can only be stale). */
  async clearQueued(): Promise<void> {
    await this.redis.del(`${this.p}queued`);
  }

  /**
   * Frees each callback's slot and counts its attempt for the destination's breaker. An item's
   * `next` (a callback of the same destination waiting for a slot in this process) is given the
   * freed slot when the circuit is closed and the destination is under its cap; with
   * `uncounted`, it never asked admission and counts as started here.
   */
  async settle(items: SettleItem[], leaseMs = 0): Promise<Settled[]> {
    if (items.length === 0) return [];
    const { first, last } = this.config.callbackBreakerProbeMs;
    const now = Date.now();
    const args = items.flatMap((i) => [
      i.origin,
      i.id,
      i.result,
      (i.error ?? '').slice(0, 500),
      i.next?.id ?? '',
      i.next?.uncounted ? '1' : '',
      i.at ?? now,
      i.started ?? 0,
    ]);
    const rows = await this.redis.destinationSettle(
      this.routingKey,
      this.p,
      now,
      this.config.callbackDestinationConcurrency,
      this.config.callbackBreakerThreshold,
      first,
      last,
      leaseMs,
      ...args,
    );
    // Room (free) is reported once per destination, by its last settlement in the batch.
    return rows.map(([t, free, waiting, handed, state]) => ({
      transition: (t || null) as Transition | null,
      free: Number(free),
      waiting: Number(waiting),
      handed: Number(handed) === 1,
      state: (state || null) as DestinationState | null,
    }));
  }

  async countWaiting(deltas: Map<string, number>): Promise<void> {
    const args = [...deltas].filter(([, n]) => n !== 0).flatMap(([origin, n]) => [origin, n]);
    if (args.length) await this.redis.destinationCountWaiting(this.routingKey, this.p, ...args);
  }

  /** Sets a destination's parked count from PostgreSQL's (after Redis lost it). */
  async setWaiting(origin: string, n: number): Promise<void> {
    if (n > 0) await this.redis.hset(`${this.p}waiting`, origin, n);
    else await this.redis.hdel(`${this.p}waiting`, origin);
  }

  async probeNow(origin: string): Promise<DestinationState> {
    return (await this.redis.destinationProbeNow(this.routingKey, this.p, origin, Date.now())) as DestinationState;
  }

  /** Open destinations whose next probe is due. */
  async probesDue(): Promise<string[]> {
    return this.redis.zrangebyscore(`${this.p}open`, '-inf', Date.now());
  }

  /** Destinations with parked callbacks, and how many (Redis's count). */
  async waiting(): Promise<Map<string, number>> {
    const h = await this.redis.hgetall(`${this.p}waiting`);
    return new Map(Object.entries(h).map(([k, v]) => [k, Number(v)]));
  }

  async openCount(): Promise<number> {
    return this.redis.zcard(`${this.p}open`);
  }

  /** Everything known about these destinations, in one round trip. */
  async snapshot(origins: string[]): Promise<DestinationSnapshot[]> {
    if (origins.length === 0) return [];
    const now = Date.now();
    const pipe = this.redis.pipeline();
    for (const o of origins) {
      pipe.hgetall(`${this.p}s:${o}`);
      pipe.zrangebyscore(`${this.p}l:${o}`, now, '+inf');
      pipe.hget(`${this.p}waiting`, o);
      pipe.zcount(`${this.p}r:${o}`, now, '+inf');
    }
    const res = (await pipe.exec()) ?? [];
    const cap = this.config.callbackDestinationConcurrency;
    return origins.map((origin, i) => {
      const [e1, s] = res[i * 4] as [Error | null, Record<string, string>];
      const [e2, leases] = res[i * 4 + 1] as [Error | null, string[]];
      const [e3, waiting] = res[i * 4 + 2] as [Error | null, string | null];
      const [e4, resumed] = res[i * 4 + 3] as [Error | null, number];
      const err = e1 ?? e2 ?? e3 ?? e4;
      if (err) throw err;
      const num = (v: string | undefined) => (v === undefined ? null : new Date(Number(v)));
      const state = (s.state as DestinationState | undefined) ?? 'closed';
      return {
        origin,
        state,
        consecutiveFailures: Number(s.failures ?? 0),
        openedAt: state === 'closed' ? null : num(s.openedAt),
        nextProbeAt: state === 'closed' ? null : num(s.nextProbeAt),
        lastError: s.lastError || null,
        waiting: Number(waiting ?? 0),
        inFlight: leases.length,
        leases,
        room: state !== 'closed' ? 0 : Math.max(0, cap - (Number(s.okAt ?? 0) > now - HEALTHY_MS ? Number(resumed) : leases.length)),
      };
    });
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }
}
