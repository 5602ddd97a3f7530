import {
  AttemptRow,
  attemptLog,
  attemptLogLine,
  callbackJobName,
  dashboardJobJson,
  DashboardRow,
  dashboardState,
  destinationOrigin,
  jobName,
  withoutUrlPaths,
} from './dashboard-job';

const NOW = new Date('2026-11-23T10:00:00.000Z');
const at = (s: number) => new Date(NOW.getTime() + s * 1000);
const COMPANY = '6f1c9a52-0d7e-4c55-9d6f-2b2f0a1d9e11';

/** A callback created a minute ago, attempted once 30 s ago (HTTP 500, 40 ms), due again in an hour. */
const row = (over: Partial<DashboardRow> = {}): DashboardRow => ({
  id: 'c0ffee00-0000-4000-8000-000000000001',
  message: 0,
  companyId: COMPANY,
  partnerName: 'Acme Bank',
  eventType: null,
  destination: 'https://bank.example',
  status: 'pending',
  attemptCount: 1,
  nextAttemptAt: at(3600),
  lastError: 'HTTP 500',
  createdAt: at(-60),
  deliveredAt: null,
  scheduleStartedAt: at(-60),
  scheduleAttempts: 1,
  lastAttemptStartedAt: at(-30),
  lastAttemptDurationMs: 40,
  circuit: null,
  ...over,
});

const attempt = (over: Partial<AttemptRow> = {}): AttemptRow => ({
  number: 1,
  startedAt: at(-30),
  durationMs: 40,
  statusCode: 500,
  error: 'HTTP 500',
  sourceAddress: '20.93.102.228',
  ...over,
});

describe('a callback row as a dashboard job', () => {
  it.each([
    ['sending', null, 'active'],
    ['sending', at(-5), 'active'],
    ['pending', at(-5), 'waiting'],
    ['pending', NOW, 'waiting'],
    ['pending', null, 'waiting'],
    ['pending', at(1), 'delayed'],
    ['pending', at(24 * 3600), 'delayed'],
    ['delivered', null, 'completed'],
    ['failed', null, 'failed'],
    ['parked', null, 'unknown'],
  ] as const)('puts a %s callback due at %s on the %s tab', (status, nextAttemptAt, tab) => {
    expect(dashboardState({ status, nextAttemptAt }, NOW)).toBe(tab);
  });

  it.each([
    [
      'sending',
      row({ status: 'sending', nextAttemptAt: at(-1) }),
      { delay: 0, processedOn: at(-30), finishedOn: null, failedReason: '' },
    ],
    [
      'waiting (due, no room yet)',
      row({ nextAttemptAt: at(-1) }),
      { delay: 0, processedOn: at(-30), finishedOn: null, failedReason: '' },
    ],
    [
      'new, never attempted',
      row({
        attemptCount: 0,
        scheduleAttempts: 0,
        nextAttemptAt: at(-60),
        lastError: null,
        lastAttemptStartedAt: null,
        lastAttemptDurationMs: null,
      }),
      { delay: 0, processedOn: null, finishedOn: null, failedReason: '' },
    ],
    // bull-board shows timestamp + delay as "will run at": exactly next_attempt_at.
    [
      'delayed (a retry 24 h away)',
      row({ nextAttemptAt: at(24 * 3600) }),
      { delay: (24 * 3600 + 60) * 1000, processedOn: at(-30), finishedOn: null, failedReason: '' },
    ],
    [
      'delivered',
      row({ status: 'delivered', nextAttemptAt: null, lastError: null, deliveredAt: at(-29) }),
      { delay: 0, processedOn: at(-30), finishedOn: at(-29), failedReason: '' },
    ],
    [
      'failed by its last attempt',
      row({ status: 'failed', nextAttemptAt: null, lastError: 'HTTP 410' }),
      { delay: 0, processedOn: at(-30), finishedOn: new Date(at(-30).getTime() + 40), failedReason: 'HTTP 410' },
    ],
    [
      'failed while its destination was open (no attempt of this schedule)',
      row({
        status: 'failed',
        nextAttemptAt: null,
        scheduleStartedAt: at(-10),
        scheduleAttempts: 0,
        lastError: 'destination https://bank.example open since … (schedule exhausted)',
      }),
      {
        delay: 0,
        processedOn: at(-30),
        finishedOn: null,
        failedReason: 'destination https://bank.example open since … (schedule exhausted)',
      },
    ],
    [
      'failed with a URL path in its error',
      row({
        status: 'failed',
        nextAttemptAt: null,
        lastError: 'refused: https://bank.example/cb/tok_123?key=abc resolves to 10.0.0.1',
      }),
      {
        delay: 0,
        processedOn: at(-30),
        finishedOn: new Date(at(-30).getTime() + 40),
        failedReason: 'refused: https://bank.example resolves to 10.0.0.1',
      },
    ],
    [
      'failed with no error recorded',
      row({ status: 'failed', nextAttemptAt: null, lastError: null }),
      {
        delay: 0,
        processedOn: at(-30),
        finishedOn: new Date(at(-30).getTime() + 40),
        failedReason: 'failed (no error recorded)',
      },
    ],
  ] as const)('shows a %s callback with its times from the row', (_what, r, expected) => {
    const job = dashboardJobJson(r, NOW);
    expect(job).toEqual({
      id: r.id,
      name: `0 CreditLimitUpdated · partner Acme Bank · company ${COMPANY} · https://bank.example`,
      data: { callbackId: r.id },
      opts: expected.delay > 0 ? { delay: expected.delay } : {},
      delay: expected.delay,
      timestamp: r.createdAt.getTime(),
      processedOn: expected.processedOn?.getTime() ?? null,
      finishedOn: expected.finishedOn?.getTime() ?? null,
      attemptsMade: r.attemptCount,
      failedReason: expected.failedReason,
      stacktrace: [],
      returnvalue: null,
      progress: 0,
    });
    if (job.delay) expect(job.timestamp + job.delay).toBe(r.nextAttemptAt!.getTime());
  });

  it("gives a failed event's delivery no failed reason (so no Retry on it), its error in its log", () => {
    const failed = { status: 'failed', nextAttemptAt: null, lastError: 'HTTP 410' };
    const event = row({ ...failed, message: null, companyId: null, eventType: 'destination.failing' });
    expect(dashboardJobJson(event, NOW)).toMatchObject({
      failedReason: '',
      stacktrace: [],
      data: { eventId: event.id, eventType: 'destination.failing' },
    });
    expect(attemptLog(event, [attempt({ statusCode: 410, error: null })], NOW).at(-1)).toMatch(/→ failed: HTTP 410$/);
    // A failed callback keeps its reason, and so its Retry.
    expect(dashboardJobJson(row(failed), NOW).failedReason).toBe('HTTP 410');
  });

  it.each([
    ['https://partner.example/hooks/abc?token=s3cret', 'https://partner.example'],
    ['https://partner.example:8443/x', 'https://partner.example:8443'],
    ['http://user:pw@127.0.0.1:9000/cb#frag', 'http://127.0.0.1:9000'],
    ['https://[2001:db8::1]:444/p?q=1', 'https://[2001:db8::1]:444'],
    ['not a url', '(no origin)'],
    ['HTTPS://Partner.Example:443/x', 'https://partner.example'],
  ])('names the destination of %s by its origin only: %s', (url, origin) => {
    expect(destinationOrigin(url)).toBe(origin);
  });

  const who = `partner Acme Bank · company ${COMPANY}`;
  it.each([
    [3, 'https://bank.example/cb/tok_123?key=abc', `3 LimitRequestStatusChanged · ${who} · https://bank.example`],
    [0, 'https://bank.example', `0 CreditLimitUpdated · ${who} · https://bank.example`],
    [9, 'mailto:x', `9 Unknown · ${who} · (no origin)`],
  ])('names a message %s job to %s by code, name, partner, company and origin only', (message, destination, name) => {
    expect(callbackJobName({ message, companyId: COMPANY, destination, partnerName: 'Acme Bank' })).toBe(name);
    expect(jobName({ message, companyId: COMPANY, destination, partnerName: 'Acme Bank', eventType: null })).toBe(name);
  });

  it.each([
    ['destination.failing', 'https://ops.acme.example/events/tok_9?key=k', 'https://ops.acme.example'],
    ['callbacks.failed', 'https://ops.acme.example:8443', 'https://ops.acme.example:8443'],
  ])('names an operational event %s sent to %s by type, partner and origin %s', (eventType, destination, origin) => {
    const name = `event ${eventType} · partner Acme Bank · operations URL ${origin}`;
    const event = row({ message: null, companyId: null, eventType, destination, status: 'failed' });
    expect(jobName(event)).toBe(name);
    expect(dashboardJobJson(event, NOW).name).toBe(name);
    expect(name).not.toMatch(/null|Unknown|company|tok_9|key=/);
  });

  it('cuts any URL quoted in a message to its origin', () => {
    expect(withoutUrlPaths('invalid URL: https://a.example/secret/path?token=x then http://b.example:81/y')).toBe(
      'invalid URL: https://a.example then http://b.example:81',
    );
  });

  it.each([
    [
      attempt({ statusCode: 204, error: null, durationMs: 12, sourceAddress: '127.0.0.2' }),
      'delivered',
      'attempt 1 at 2026-11-23T09:59:30.000Z: HTTP 204 in 12 ms from 127.0.0.2 → delivered',
    ],
    [
      attempt({
        number: 3,
        statusCode: null,
        error: 'timeout: no answer within 500 ms',
        durationMs: 501,
        sourceAddress: null,
      }),
      undefined,
      'attempt 3 at 2026-11-23T09:59:30.000Z: timeout: no answer within 500 ms in 501 ms from unknown address',
    ],
    [
      attempt({ error: 'refused https://x.example/tok?k=1' }),
      'failed: see https://x.example/p',
      'attempt 1 at 2026-11-23T09:59:30.000Z: refused https://x.example in 40 ms from 20.93.102.228 → ' +
        'failed: see https://x.example',
    ],
  ])('logs an attempt as one line: %#', (a, then, line) => {
    expect(attemptLogLine(a, then)).toBe(line);
  });

  const T = (s: number) => at(s).toISOString();
  it.each([
    [
      'a retry 1 h away',
      row(),
      [attempt()],
      [`attempt 1 at ${T(-30)}: HTTP 500 in 40 ms from 20.93.102.228 → next attempt at ${T(3600)}`],
    ],
    [
      'a dead letter',
      row({ status: 'failed', nextAttemptAt: null, lastError: 'HTTP 410' }),
      [attempt({ statusCode: 410, error: null })],
      [`attempt 1 at ${T(-30)}: HTTP 410 in 40 ms from 20.93.102.228 → failed: HTTP 410`],
    ],
    [
      'delivered at the second attempt',
      row({
        status: 'delivered',
        attemptCount: 2,
        scheduleAttempts: 2,
        nextAttemptAt: null,
        lastError: null,
        deliveredAt: at(-9),
        lastAttemptStartedAt: at(-10),
      }),
      [attempt(), attempt({ number: 2, startedAt: at(-10), statusCode: 200, error: null })],
      [
        `attempt 1 at ${T(-30)}: HTTP 500 in 40 ms from 20.93.102.228`,
        `attempt 2 at ${T(-10)}: HTTP 200 in 40 ms from 20.93.102.228 → delivered`,
      ],
    ],
    [
      'in flight again',
      row({ status: 'sending' }),
      [attempt()],
      [`attempt 1 at ${T(-30)}: HTTP 500 in 40 ms from 20.93.102.228 → being sent now`],
    ],
    [
      'never attempted',
      row({ attemptCount: 0, scheduleAttempts: 0, nextAttemptAt: at(-60), lastAttemptStartedAt: null }),
      [],
      [`created at ${T(-60)}, no attempt since → next attempt at ${T(-60)}`],
    ],
    [
      'failed while its destination was open, without an attempt',
      row({
        status: 'failed',
        attemptCount: 0,
        scheduleAttempts: 0,
        nextAttemptAt: null,
        lastError: 'destination open (schedule exhausted)',
        lastAttemptStartedAt: null,
      }),
      [],
      [`created at ${T(-60)}, no attempt since → failed: destination open (schedule exhausted)`],
    ],
    [
      'redelivered after delivery, not attempted yet',
      row({ scheduleStartedAt: at(-5), scheduleAttempts: 0, nextAttemptAt: at(-5) }),
      [attempt({ statusCode: 204, error: null })],
      [
        `attempt 1 at ${T(-30)}: HTTP 204 in 40 ms from 20.93.102.228 → delivered`,
        `redelivered at ${T(-5)}, no attempt since → next attempt at ${T(-5)}`,
      ],
    ],
    [
      'only its latest attempts',
      row({ status: 'failed', attemptCount: 1500, scheduleAttempts: 8, nextAttemptAt: null, lastError: 'HTTP 410' }),
      [attempt({ number: 1499, startedAt: at(-40) }), attempt({ number: 1500, statusCode: 410, error: null })],
      [
        'attempts 1 to 1498 not shown ' +
          '(GET /admin/v1/callbacks/c0ffee00-0000-4000-8000-000000000001 lists every attempt)',
        `attempt 1499 at ${T(-40)}: HTTP 500 in 40 ms from 20.93.102.228`,
        `attempt 1500 at ${T(-30)}: HTTP 410 in 40 ms from 20.93.102.228 → failed: HTTP 410`,
      ],
    ],
    // Held by its destination's open circuit: why it waits, and until when (never a time already past).
    [
      'held by an open circuit whose probe is to come',
      row({
        nextAttemptAt: at(-20),
        circuit: { openedAt: at(-25).getTime(), nextProbeAt: at(40).getTime(), probeAsked: false },
      }),
      [attempt()],
      [
        `attempt 1 at ${T(-30)}: HTTP 500 in 40 ms from 20.93.102.228 → ` +
          `waiting: circuit open since ${T(-25)}, next probe at ${T(40)}`,
      ],
    ],
    [
      'held by an open circuit whose probe time has passed (half-open)',
      row({
        nextAttemptAt: at(-20),
        circuit: { openedAt: at(-25).getTime(), nextProbeAt: at(-5).getTime(), probeAsked: false },
      }),
      [attempt()],
      [
        `attempt 1 at ${T(-30)}: HTTP 500 in 40 ms from 20.93.102.228 → ` +
          `waiting: circuit open since ${T(-25)}, ` +
          `next probe now (half-open: it or the next callback goes as the probe)`,
      ],
    ],
    [
      'redelivered while its destination is open (the probe asked for)',
      row({
        scheduleStartedAt: at(-5),
        scheduleAttempts: 0,
        nextAttemptAt: at(-5),
        circuit: { openedAt: at(-25).getTime(), nextProbeAt: at(600).getTime(), probeAsked: true },
      }),
      [attempt()],
      [
        `attempt 1 at ${T(-30)}: HTTP 500 in 40 ms from 20.93.102.228`,
        `redelivered at ${T(-5)}, no attempt since → waiting: circuit open since ${T(-25)}, ` +
          `next probe now (half-open: it or the next callback goes as the probe)`,
      ],
    ],
    // The worker's clock may run behind PostgreSQL's: the attempt counter decides.
    [
      'attempted right after creation by a worker whose clock is behind',
      row({ status: 'failed', nextAttemptAt: null, lastError: 'HTTP 410', scheduleStartedAt: at(-29) }),
      [attempt({ statusCode: 410, error: null })],
      [`attempt 1 at ${T(-30)}: HTTP 410 in 40 ms from 20.93.102.228 → failed: HTTP 410`],
    ],
  ] as const)('logs %s', (_what, r, attempts, lines) => {
    expect(attemptLog(r, [...attempts], NOW)).toEqual(lines);
  });
});
